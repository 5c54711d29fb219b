import { invalidField } from '@hub/http';
import { checkDestination, type DestinationPolicy, parseDestinationUrl } from '@hub/destinations';

/** Throws the 422 of a url_de_destino that deliveries may not go to under the policy. */
export function verificadorDeDestino(policy: DestinationPolicy) {
  return async (text: string): Promise<void> => {
    const parsed = parseDestinationUrl(text);
    if ('problema' in parsed) throw invalidField('/url_de_destino', 'url_invalida', parsed.problema);
    const verdict = await checkDestination(parsed.url, policy);
    if (!verdict.permitido) throw invalidField('/url_de_destino', verdict.codigo, verdict.motivo);
  };
}

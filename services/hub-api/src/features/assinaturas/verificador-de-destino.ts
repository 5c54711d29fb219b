import { invalidField } from '@hub/http';
import { checkDestination, type DestinationPolicy, parseDestinationUrl } from '@hub/destinations';
import type { Logger } from '@hub/log';

/**
 * Throws the 422 of a url_de_destino that deliveries may not go to under the policy. `urlAtual` is
 * the subscription's stored URL at a PATCH: written back unchanged, an http URL accepted before
 * https was required stays acceptable (its address is still checked). The address a host name
 * resolved to goes to the log, never into the answer.
 */
export function verificadorDeDestino(policy: DestinationPolicy, logger?: Logger) {
  return async (text: string, urlAtual?: string): Promise<void> => {
    const parsed = parseDestinationUrl(text);
    if ('problema' in parsed) throw invalidField('/url_de_destino', 'url_invalida', parsed.problema);
    const verdict = await checkDestination(parsed.url, policy);
    if (verdict.permitido) return;
    if (verdict.codigo === 'https_obrigatorio' && parsed.url.href === urlAtual) return;
    if (verdict.enderecoRecusado)
      logger?.warn(
        { host: parsed.url.hostname, endereco: verdict.enderecoRecusado },
        'destination refused: the host resolves to a non-public address',
      );
    throw invalidField('/url_de_destino', verdict.codigo, verdict.motivo);
  };
}

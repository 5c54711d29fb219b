import type { AssinaturaDto } from '../assinaturas/assinaturas.schemas';
import type { AssinaturasService } from '../assinaturas/assinaturas.service';
import type { Autor } from '../assinaturas/autoria';

/** The application behind one of its own requests: its id (the scope) and client_id (the author). */
export interface AplicativoChamador {
  id: string;
  clientId: string;
}

type Criar = Parameters<AssinaturasService['criar']>[0];
type Atualizar = Parameters<AssinaturasService['atualizar']>[1];

/**
 * An operator's e-mail is not the subscribing application's business: it sees that an operator
 * made the last change, not who.
 */
export const paraOAssinante = (assinatura: AssinaturaDto): AssinaturaDto =>
  assinatura.alterada_por_tipo === 'operador' ? { ...assinatura, alterada_por: null } : assinatura;

/**
 * A subscribing application's own subscriptions (POST/PATCH/DELETE /assinaturas): the panel's
 * service, with the application of the token as subscriber and scope (another application's
 * subscription is not found), the application as author of each change, and its budget of
 * subscriptions held (docs/decisions/subscribers-portal.md).
 */
export function assinaturasPropriasService(deps: { assinaturas: AssinaturasService; maximoDeAssinaturas: number }) {
  const { assinaturas, maximoDeAssinaturas } = deps;
  const autor = (aplicativo: AplicativoChamador): Autor => ({ tipo: 'aplicativo', quem: aplicativo.clientId });
  const escopo = (aplicativo: AplicativoChamador) => ({ aplicativo_assinante_id: aplicativo.id });
  return {
    criar: async (aplicativo: AplicativoChamador, input: Omit<Criar, 'aplicativo_assinante_id'>) =>
      paraOAssinante(
        await assinaturas.criar({ ...input, aplicativo_assinante_id: aplicativo.id }, autor(aplicativo), {
          maximoDeAssinaturas,
        }),
      ),

    atualizar: async (aplicativo: AplicativoChamador, id: string, input: Atualizar) =>
      paraOAssinante(await assinaturas.atualizar(id, input, autor(aplicativo), escopo(aplicativo))),

    excluir: (aplicativo: AplicativoChamador, id: string) =>
      assinaturas.excluir(id, autor(aplicativo), escopo(aplicativo)),
  };
}
export type AssinaturasPropriasService = ReturnType<typeof assinaturasPropriasService>;

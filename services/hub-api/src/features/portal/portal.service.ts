import { uuidv7 } from '@hub/database';
import { conflict, invalidField, notFound, unauthorized } from '@hub/http';
import { type DbClient, transacao } from '../../db';
import { iso } from '../../schemas';
import type { AplicativosRepository } from '../aplicativos/aplicativos.repository';
import type { PortalRepository } from './portal.repository';
import { type LinkDoPortal, VIDA_MAXIMA_MS, VIDA_PADRAO_MS } from './portal.schemas';
import { digestoDoToken, novoTokenDoPortal } from './token';

export interface PortalDeps {
  db: DbClient;
  links: PortalRepository;
  aplicativos: Pick<AplicativosRepository, 'buscar'>;
  /** The gateway's public address (HUB_GATEWAY_URL); a trailing slash is dropped. */
  gatewayUrl: string;
  relogio?: () => Date;
}

/** The application a portal token opens, once looked up: its id and the client_id its budgets count. */
export interface AplicativoDoPortal {
  id: string;
  clientId: string;
  ativo: boolean;
}

const DIA_MS = 24 * 60 * 60 * 1000;

/**
 * Links of the subscribers' portal (docs/decisions/subscribers-portal.md): an operator makes one
 * for an application, at most 24 h long, and revokes them all at once. A token is looked up at each
 * request, never remembered, so a revoked or expired one is refused on every replica at its next use.
 */
export function portalService({ db, links, aplicativos, gatewayUrl, relogio = () => new Date() }: PortalDeps) {
  const portalUrl = `${gatewayUrl.replace(/\/+$/, '')}/portal/`;
  async function exigirAplicativo(id: string, cliente: DbClient) {
    const aplicativo = await aplicativos.buscar(id, cliente);
    if (!aplicativo) throw notFound('application');
    return aplicativo;
  }

  /** When the link ends: after now, at most 24 h ahead, 1 h unless told (422 at /expira_em otherwise). */
  function fimDoLink(pedido: string | null | undefined, agora: Date): Date {
    if (pedido == null) return new Date(agora.getTime() + VIDA_PADRAO_MS);
    const fim = new Date(pedido);
    if (fim.getTime() <= agora.getTime())
      throw invalidField('/expira_em', 'expira_em_invalido', 'expira_em must be after now');
    if (fim.getTime() - agora.getTime() > VIDA_MAXIMA_MS)
      throw invalidField('/expira_em', 'expira_em_invalido', 'expira_em must be at most 24 hours ahead');
    return fim;
  }

  return {
    async emitir(aplicativoId: string, input: { expira_em?: string | null }, email: string): Promise<LinkDoPortal> {
      const agora = relogio();
      const expiraEm = fimDoLink(input.expira_em, agora);
      const token = novoTokenDoPortal();
      await transacao(db, async (tx) => {
        const aplicativo = await exigirAplicativo(aplicativoId, tx);
        if (!aplicativo.ativo)
          throw conflict('aplicativo_inativo', 'the application is switched off: its portal would open nothing');
        await links.esquecerVencidos(aplicativoId, new Date(agora.getTime() - DIA_MS), tx);
        await links.criar(
          {
            id: uuidv7(),
            aplicativoId,
            tokenSha256: digestoDoToken(token),
            expiraEm,
            criadoPeloEmail: email,
            criadoEm: agora,
          },
          tx,
        );
      });
      return { url: `${portalUrl}#token=${token}`, token, expira_em: iso(expiraEm) };
    },

    /** Revokes every link of the application made so far; links made afterwards work. */
    async revogar(aplicativoId: string): Promise<void> {
      await exigirAplicativo(aplicativoId, db);
      await links.revogar(aplicativoId, relogio());
    },

    /** The application a token opens now; 401 for a token unknown, revoked or expired. */
    async verificar(token: string, cliente: DbClient = db): Promise<AplicativoDoPortal> {
      const link = await links.doDigesto(digestoDoToken(token), cliente);
      if (!link || link.revogadoEm) throw unauthorized('the portal link is unknown or was revoked', 'token_invalido');
      if (link.expiraEm.getTime() <= relogio().getTime())
        throw unauthorized('the portal link has expired', 'token_expirado');
      return link.aplicativo;
    },
  };
}
export type PortalService = ReturnType<typeof portalService>;

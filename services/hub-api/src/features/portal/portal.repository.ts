import type { DbClient } from '../../db';

/** The links of the subscribers' portal (table link_do_portal, migration 032). */
export function portalRepository(db: DbClient) {
  return {
    criar: (
      link: {
        id: string;
        aplicativoId: string;
        tokenSha256: string;
        expiraEm: Date;
        criadoPeloEmail: string;
        criadoEm: Date;
      },
      cliente: DbClient = db,
    ) => cliente.linkDoPortal.create({ data: link }),

    /** Every link of the application not yet revoked is revoked now; answers how many. */
    revogar: async (aplicativoId: string, agora: Date, cliente: DbClient = db) =>
      (
        await cliente.linkDoPortal.updateMany({
          where: { aplicativoId, revogadoEm: null },
          data: { revogadoEm: agora },
        })
      ).count,

    /** Links that expired a day ago or more are of no use to anyone: dropped when a new one is made. */
    esquecerVencidos: (aplicativoId: string, antesDe: Date, cliente: DbClient = db) =>
      cliente.linkDoPortal.deleteMany({ where: { aplicativoId, expiraEm: { lt: antesDe } } }),

    /** The link of a token's digest, with its application's client_id and state. */
    doDigesto: (tokenSha256: string, cliente: DbClient = db) =>
      cliente.linkDoPortal.findUnique({
        where: { tokenSha256 },
        select: {
          expiraEm: true,
          revogadoEm: true,
          aplicativo: { select: { id: true, clientId: true, ativo: true } },
        },
      }),
  };
}
export type PortalRepository = ReturnType<typeof portalRepository>;

import { executeOnPrisma, likeLiteral, runOnPrisma, uuidv7 } from '@hub/database';
import type { PageRequest } from '@hub/http';
import { skipTake } from '@hub/http';
import { type DbClient, transacao } from '../../db';
import type { Acesso, Prisma } from '../../generated/prisma/client';
import { ACESSO_PAGINA, ACESSO_TRAVAR_EMAIL, ACESSO_TRAVAR_PARA_ALTERAR, ACESSO_TRAVAR_PERFIL } from './acessos.sql';

const vivo = { excluidoEm: null } satisfies Prisma.AcessoWhereInput;

export interface AcessoFiltro {
  email?: string;
  perfil?: string;
  ativo?: boolean;
}

function whereOf(filtro: AcessoFiltro): Prisma.AcessoWhereInput {
  return {
    ...vivo,
    ...(filtro.email ? { email: { contains: likeLiteral(filtro.email.toLowerCase()) } } : {}),
    ...(filtro.perfil !== undefined ? { perfil: filtro.perfil } : {}),
    ...(filtro.ativo !== undefined ? { ativo: filtro.ativo } : {}),
  };
}

export interface RawAcesso {
  id: string;
  email: string;
  perfil: string;
  ativo: boolean;
  master: boolean;
  termoauth_id: string | null;
  nome: string | null;
  perfil_de_acesso_id: string | null;
  bloqueado_ate: Date | null;
  ultimo_login_em: Date | null;
  excluido_em: Date | null;
  criado_em: Date;
  atualizado_em: Date;
}

const fromRaw = (row: RawAcesso): Acesso => ({
  id: row.id,
  email: row.email,
  perfil: row.perfil,
  ativo: row.ativo,
  master: row.master,
  termoauthId: row.termoauth_id,
  nome: row.nome,
  perfilDeAcessoId: row.perfil_de_acesso_id,
  bloqueadoAte: row.bloqueado_ate,
  ultimoLoginEm: row.ultimo_login_em,
  excluidoEm: row.excluido_em,
  criadoEm: row.criado_em,
  atualizadoEm: row.atualizado_em,
});

/**
 * Serialises, until the end of the caller's transaction, everything that links an e-mail's access
 * to its collaborator: creating or re-addressing an access, and applying a synchronisation. Without
 * it, a synchronisation committed while an access of the same e-mail was being created links
 * nothing: each side reads before the other commits.
 */
export const travarEmail = (tx: DbClient, email: string) =>
  executeOnPrisma(tx, ACESSO_TRAVAR_EMAIL, [`acesso-email:${email}`]);

/** Accesses as stored; deleted ones (excluido_em set) are invisible to every query here. */
export function acessosRepository(db: DbClient) {
  /** The live collaborator of the e-mail in the projection, whose name and id an access takes. */
  const colaboradorDe = (email: string, cliente: DbClient = db) =>
    cliente.colaborador.findFirst({ where: { email, removido: false }, orderBy: { versao: 'desc' } });

  return {
    async page(request: PageRequest): Promise<{ itens: Acesso[]; total: number }> {
      const { skip, take } = skipTake(request);
      // One round trip: the page and the total of live accesses, by the partial index on (perfil, email).
      const rows = await runOnPrisma(db, ACESSO_PAGINA, [skip, take]);
      const total = rows[0] ? Number(rows[0].total) : await db.acesso.count({ where: vivo });
      return { itens: rows.map(fromRaw), total };
    },

    async autocomplete(filtro: AcessoFiltro, request: PageRequest) {
      const where = whereOf(filtro);
      const [itens, total] = await Promise.all([
        db.acesso.findMany({
          where,
          select: { id: true, email: true, perfil: true },
          orderBy: [{ email: 'asc' }, { id: 'asc' }],
          ...skipTake(request),
        }),
        db.acesso.count({ where }),
      ]);
      return { itens, total };
    },

    filtro(filtro: AcessoFiltro): Promise<Acesso[]> {
      return db.acesso.findMany({ where: whereOf(filtro), orderBy: [{ email: 'asc' }, { id: 'asc' }] });
    },

    byId(id: string): Promise<Acesso | null> {
      return db.acesso.findFirst({ where: { id, ...vivo } });
    },

    /**
     * The live access with its profile's permissions, for a change decided on them: the access row
     * stays locked, and its profile share-locked, until the caller's transaction ends, so neither
     * can be changed between the check and the write.
     */
    async paraAlterar(id: string) {
      const [locked] = await runOnPrisma(db, ACESSO_TRAVAR_PARA_ALTERAR, [id]);
      if (!locked) return null;
      if (locked.perfil_de_acesso_id !== null) {
        await executeOnPrisma(db, ACESSO_TRAVAR_PERFIL, [locked.perfil_de_acesso_id]);
      }
      return db.acesso.findUniqueOrThrow({
        where: { id },
        include: { perfilDeAcesso: { select: { nome: true, permissoes: true } } },
      });
    },

    byEmail(email: string) {
      return db.acesso.findFirst({
        where: { email, ...vivo },
        include: { perfilDeAcesso: { select: { nome: true, permissoes: true } } },
      });
    },

    /** Creates an access, linked at once to the collaborator of the same e-mail if one is known. */
    create(data: { email: string; perfil: string; master: boolean }): Promise<Acesso> {
      return transacao(db, async (tx) => {
        await travarEmail(tx, data.email);
        const colaborador = await colaboradorDe(data.email, tx);
        const now = new Date();
        return tx.acesso.create({
          data: {
            id: uuidv7(),
            email: data.email,
            perfil: data.perfil,
            ativo: true,
            master: data.master,
            termoauthId: colaborador?.termoauthId ?? null,
            nome: colaborador?.nome ?? null,
            criadoEm: now,
            atualizadoEm: now,
          },
        });
      });
    },

    /**
     * Two statements when the e-mail changes: give it a transaction so the link cannot go stale.
     * The access profile does not follow the e-mail: permissions were given to a person, and a new
     * address is somebody else until a profile is given to it again.
     */
    update(id: string, data: { email?: string; ativo?: boolean }): Promise<Acesso> {
      return transacao(db, async (tx) => {
        const changes: Prisma.AcessoUncheckedUpdateInput = { ...data, atualizadoEm: new Date() };
        if (data.email !== undefined) {
          // The link follows the e-mail: the collaborator of the new address, or none.
          await travarEmail(tx, data.email);
          const colaborador = await colaboradorDe(data.email, tx);
          changes.termoauthId = colaborador?.termoauthId ?? null;
          changes.nome = colaborador?.nome ?? null;
          changes.perfilDeAcessoId = null;
        }
        return tx.acesso.update({ where: { id }, data: changes });
      });
    },

    async markDeleted(id: string): Promise<void> {
      const now = new Date();
      await db.acesso.update({ where: { id }, data: { excluidoEm: now, atualizadoEm: now } });
    },

    /** A master's record is active: nobody may have switched it off (see the resolver). */
    async touchLogin(id: string, now: Date, master: boolean): Promise<void> {
      await db.acesso.update({
        where: { id },
        data: { ultimoLoginEm: now, master, ...(master ? { ativo: true } : {}) },
      });
    },
  };
}

export type AcessosRepository = ReturnType<typeof acessosRepository>;

import type { ColaboradorSincronizado } from '@hub/contracts';
import { executeOnPrisma, likeLiteral, runOnPrisma } from '@hub/database';
import { type PageRequest, skipTake } from '@hub/http';
import type { DbClient } from '../../db';
import type { Prisma } from '../../generated/prisma/client';
import { PERFIL_COLABORADOR } from '../acessos/acessos.model';
import { COLABORADOR_APLICAR, COLABORADOR_DESVINCULAR, COLABORADOR_VINCULAR } from './colaboradores.sql';

const include = { perfilDeAcesso: { select: { nome: true, permissoes: true } } } satisfies Prisma.AcessoInclude;
export type ColaboradorRow = Prisma.AcessoGetPayload<{ include: typeof include }>;

const ordem = [{ email: 'asc' }, { id: 'asc' }] satisfies Prisma.AcessoOrderByWithRelationInput[];

function whereOf(busca?: string): Prisma.AcessoWhereInput {
  return {
    excluidoEm: null,
    perfil: PERFIL_COLABORADOR,
    ...(busca
      ? {
          OR: [
            { email: { contains: likeLiteral(busca.toLowerCase()) } },
            { nome: { contains: likeLiteral(busca), mode: 'insensitive' } },
          ],
        }
      : {}),
  };
}

/**
 * Collaborators: accesses of perfil colaborador with their profile, and the projection of the
 * identity service's collaborators (function, link by e-mail) kept from its synchronisation.
 */
export function colaboradoresRepository(db: DbClient) {
  return {
    async page(request: PageRequest & { busca?: string }) {
      const where = whereOf(request.busca);
      const [itens, total] = await Promise.all([
        db.acesso.findMany({ where, include, orderBy: ordem, ...skipTake(request) }),
        db.acesso.count({ where }),
      ]);
      return { itens, total };
    },

    async autocomplete(request: PageRequest & { busca?: string }) {
      const where = whereOf(request.busca);
      const [itens, total] = await Promise.all([
        db.acesso.findMany({
          where,
          select: { id: true, email: true, nome: true },
          orderBy: ordem,
          ...skipTake(request),
        }),
        db.acesso.count({ where }),
      ]);
      return { itens, total };
    },

    filtro: (busca?: string) => db.acesso.findMany({ where: whereOf(busca), include, orderBy: ordem }),

    byId: (id: string) => db.acesso.findFirst({ where: { id, ...whereOf() }, include }),

    /** Any live access (a master's too), with its profile, locked until the transaction ends. */
    async setPerfil(id: string, perfilDeAcessoId: string | null): Promise<void> {
      await db.acesso.update({ where: { id }, data: { perfilDeAcessoId, atualizadoEm: new Date() } });
    },

    /** Function ids of the identity service's collaborators, by termoauth_id. */
    async funcoes(termoauthIds: string[]): Promise<Map<string, string | null>> {
      if (termoauthIds.length === 0) return new Map();
      const rows = await db.colaborador.findMany({
        where: { termoauthId: { in: termoauthIds } },
        select: { termoauthId: true, funcaoId: true },
      });
      return new Map(rows.map((c) => [c.termoauthId, c.funcaoId]));
    },

    /**
     * Keeps the projection: only a newer `versao` wins, so duplicates and late messages change
     * nothing. Returns whether the message was applied.
     */
    async aplicarProjecao(message: ColaboradorSincronizado, email: string): Promise<boolean> {
      const applied = await executeOnPrisma(db, COLABORADOR_APLICAR, [
        message.termoauth_id,
        email,
        message.nome,
        message.funcao_id,
        message.ativo,
        message.removido,
        message.versao,
      ]);
      return applied > 0;
    },

    /** Unlinks the access of a removed collaborator, or of one moved to another e-mail. */
    desvincular: (message: ColaboradorSincronizado, email: string) =>
      runOnPrisma(db, COLABORADOR_DESVINCULAR, [message.termoauth_id, message.removido, email]),

    /** Links the live access of the e-mail (vinculado, nome, termoauth_id) when anything differs. */
    vincular: (message: ColaboradorSincronizado, email: string) =>
      runOnPrisma(db, COLABORADOR_VINCULAR, [message.termoauth_id, message.nome, email]),
  };
}

export type ColaboradoresRepository = ReturnType<typeof colaboradoresRepository>;

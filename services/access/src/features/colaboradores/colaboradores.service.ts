import { forbidden, invalidField, notFound, type PageRequest, skipTake } from '@hub/http';
import { likeLiteral } from '@hub/database';
import { z } from 'zod';
import type { Db } from '../../db';
import type { AccessEvents } from '../../events';
import type { Prisma } from '../../generated/prisma/client';
import { iso, PERFIL_COLABORADOR } from '../acessos/acessos.model';

export const colaboradorSchema = z.object({
  id: z.string(),
  email: z.string(),
  nome: z.string(),
  termoauth_id: z.string().nullable(),
  vinculado: z.boolean(),
  funcao_id: z.string().nullable(),
  ativo: z.boolean(),
  perfil_de_acesso_id: z.string().nullable(),
  perfil_de_acesso_nome: z.string().nullable(),
  criado_em: z.string(),
  atualizado_em: z.string(),
});
export type ColaboradorView = z.infer<typeof colaboradorSchema>;

const include = { perfilDeAcesso: { select: { nome: true } } } satisfies Prisma.AcessoInclude;
type Row = Prisma.AcessoGetPayload<{ include: typeof include }>;

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
 * A collaborator is an access of perfil colaborador seen with the identity service's data (name,
 * function, link). Its id is the access id. Only its access profile is changed here.
 */
export class ColaboradoresService {
  constructor(
    private readonly db: Db,
    private readonly events: AccessEvents,
  ) {}

  async page(request: PageRequest & { busca?: string }) {
    const where = whereOf(request.busca);
    const [rows, total] = await Promise.all([
      this.db.acesso.findMany({ where, include, orderBy: ordem, ...skipTake(request) }),
      this.db.acesso.count({ where }),
    ]);
    return { itens: await this.view(rows), total };
  }

  async autocomplete(request: PageRequest & { busca?: string }) {
    const where = whereOf(request.busca);
    const [rows, total] = await Promise.all([
      this.db.acesso.findMany({
        where,
        select: { id: true, email: true, nome: true },
        orderBy: ordem,
        ...skipTake(request),
      }),
      this.db.acesso.count({ where }),
    ]);
    return { itens: rows.map((r) => ({ id: r.id, email: r.email, nome: r.nome ?? r.email })), total };
  }

  async filtro(busca?: string) {
    return this.view(await this.db.acesso.findMany({ where: whereOf(busca), include, orderBy: ordem }));
  }

  async get(id: string): Promise<ColaboradorView> {
    const row = await this.db.acesso.findFirst({ where: { id, ...whereOf() }, include });
    if (!row) throw notFound('collaborator');
    const [view] = await this.view([row]);
    return view!;
  }

  async assignProfile(id: string, perfilDeAcessoId: string | null): Promise<ColaboradorView> {
    const row = await this.db.acesso.findFirst({ where: { id, excluidoEm: null } });
    if (!row) throw notFound('collaborator');
    if (row.master) throw forbidden('the access of a master cannot be changed', 'acesso_master_protegido');
    if (perfilDeAcessoId && !(await this.db.perfilDeAcesso.findUnique({ where: { id: perfilDeAcessoId } }))) {
      throw invalidField('/perfil_de_acesso_id', 'perfil_inexistente', 'no access profile has this id');
    }
    await this.db.acesso.update({ where: { id }, data: { perfilDeAcessoId, atualizadoEm: new Date() } });
    await this.events.changed({ email: row.email, acesso_id: id, motivo: 'perfil_atribuido' });
    return this.get(id);
  }

  private async view(rows: Row[]): Promise<ColaboradorView[]> {
    const ids = rows.map((r) => r.termoauthId).filter((id): id is string => id !== null);
    const funcoes = new Map(
      ids.length === 0
        ? []
        : (
            await this.db.colaborador.findMany({
              where: { termoauthId: { in: ids } },
              select: { termoauthId: true, funcaoId: true },
            })
          ).map((c) => [c.termoauthId, c.funcaoId]),
    );
    return rows.map((r) => ({
      id: r.id,
      email: r.email,
      nome: r.nome ?? r.email,
      termoauth_id: r.termoauthId,
      vinculado: r.termoauthId !== null,
      funcao_id: r.termoauthId ? (funcoes.get(r.termoauthId) ?? null) : null,
      ativo: r.ativo,
      perfil_de_acesso_id: r.perfilDeAcessoId,
      perfil_de_acesso_nome: r.perfilDeAcesso?.nome ?? null,
      criado_em: iso(r.criadoEm),
      atualizado_em: iso(r.atualizadoEm),
    }));
  }
}

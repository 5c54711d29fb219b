import { permissoesSchema } from '@hub/contracts';
import { isUniqueViolation, likeLiteral, uuidv7 } from '@hub/database';
import { conflict, notFound, type PageRequest, skipTake } from '@hub/http';
import { z } from 'zod';
import type { Db } from '../../db';
import type { AccessEvents } from '../../events';
import type { PerfilDeAcesso, Prisma } from '../../generated/prisma/client';
import { iso, normalizePermissoes } from '../acessos/acessos.model';

export const nomeDoPerfil = z.string().trim().min(1).max(120);
export const perfilCriar = z.object({ nome: nomeDoPerfil, permissoes: permissoesSchema }).strict();
export const perfilAtualizar = z
  .object({ nome: nomeDoPerfil.optional(), permissoes: permissoesSchema.optional() })
  .strict();

export const perfilSchema = z.object({
  id: z.string(),
  nome: z.string(),
  permissoes: permissoesSchema,
  criado_em: z.string(),
  atualizado_em: z.string(),
});

export const toPerfil = (perfil: PerfilDeAcesso) => ({
  id: perfil.id,
  nome: perfil.nome,
  permissoes: normalizePermissoes(perfil.permissoes),
  criado_em: iso(perfil.criadoEm),
  atualizado_em: iso(perfil.atualizadoEm),
});

const byName = (busca?: string): Prisma.PerfilDeAcessoWhereInput =>
  busca ? { nome: { contains: likeLiteral(busca), mode: 'insensitive' } } : {};
const ordem = [{ nome: 'asc' }, { id: 'asc' }] satisfies Prisma.PerfilDeAcessoOrderByWithRelationInput[];

/** Access profiles: a name and a permission map; an access has at most one. */
export class PerfisService {
  constructor(
    private readonly db: Db,
    private readonly events: AccessEvents,
  ) {}

  async page(request: PageRequest & { busca?: string }) {
    const where = byName(request.busca);
    const [itens, total] = await Promise.all([
      this.db.perfilDeAcesso.findMany({ where, orderBy: ordem, ...skipTake(request) }),
      this.db.perfilDeAcesso.count({ where }),
    ]);
    return { itens, total };
  }

  async autocomplete(request: PageRequest & { busca?: string }) {
    const where = byName(request.busca);
    const [itens, total] = await Promise.all([
      this.db.perfilDeAcesso.findMany({
        where,
        select: { id: true, nome: true },
        orderBy: ordem,
        ...skipTake(request),
      }),
      this.db.perfilDeAcesso.count({ where }),
    ]);
    return { itens, total };
  }

  filtro(busca?: string) {
    return this.db.perfilDeAcesso.findMany({ where: byName(busca), orderBy: ordem });
  }

  async get(id: string): Promise<PerfilDeAcesso> {
    const perfil = await this.db.perfilDeAcesso.findUnique({ where: { id } });
    if (!perfil) throw notFound('access profile');
    return perfil;
  }

  async create(input: z.infer<typeof perfilCriar>): Promise<PerfilDeAcesso> {
    const now = new Date();
    return this.db.perfilDeAcesso
      .create({
        data: {
          id: uuidv7(),
          nome: input.nome,
          permissoes: normalizePermissoes(input.permissoes),
          criadoEm: now,
          atualizadoEm: now,
        },
      })
      .catch(nameTaken);
  }

  async update(id: string, input: z.infer<typeof perfilAtualizar>): Promise<PerfilDeAcesso> {
    await this.get(id);
    const updated = await this.db.perfilDeAcesso
      .update({
        where: { id },
        data: {
          ...(input.nome !== undefined ? { nome: input.nome } : {}),
          ...(input.permissoes !== undefined ? { permissoes: normalizePermissoes(input.permissoes) } : {}),
          atualizadoEm: new Date(),
        },
      })
      .catch(nameTaken);
    if (input.permissoes !== undefined || input.nome !== undefined) {
      await this.events.changed({ perfil_de_acesso_id: id, motivo: 'perfil_alterado' });
    }
    return updated;
  }

  async delete(id: string): Promise<void> {
    await this.get(id);
    const emUso = await this.db.acesso.count({ where: { perfilDeAcessoId: id, excluidoEm: null } });
    if (emUso > 0) throw conflict('perfil_em_uso', `${emUso} access(es) use this profile`);
    await this.db.$transaction([
      // Deleted accesses keep their record, but not a link to a profile that no longer exists.
      this.db.acesso.updateMany({ where: { perfilDeAcessoId: id }, data: { perfilDeAcessoId: null } }),
      this.db.perfilDeAcesso.delete({ where: { id } }),
    ]);
    await this.events.changed({ perfil_de_acesso_id: id, motivo: 'perfil_excluido' });
  }
}

function nameTaken(error: unknown): never {
  if (isUniqueViolation(error)) throw conflict('nome_em_uso', 'another access profile has this name');
  throw error;
}

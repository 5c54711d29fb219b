import { type PageRequest, page, pageQuery, skipTake } from '@hub/http';
import { z } from 'zod';
import type { DbClient } from '../../db';
import { pagina } from '../../schemas';
import { exemploDe } from './exemplo';

export const catalogoQuery = pageQuery({ maxTamanho: 100 });

const versaoOferecida = z.object({
  versao: z.number().int(),
  descricao: z.string().nullable(),
  esquema: z.record(z.string(), z.unknown()).describe('the JSON Schema the dados of this version satisfy'),
  exemplo: z
    .record(z.string(), z.unknown())
    .describe(
      'an example delivery body of this version (Standard Webhooks formato), its dados made from the schema: an illustration, not guaranteed valid against every keyword',
    ),
});
export const tipoOferecidoSchema = z.object({
  id: z.string(),
  nome: z.string(),
  descricao: z.string().nullable(),
  versoes: z.array(versaoOferecida).describe('its schema versions that are switched on, oldest first'),
});
export const paginaDeTiposOferecidos = pagina(tipoOferecidoSchema);

/** A delivery body of the version as the worker would send it, with example values around `dados`. */
const corpoDeExemplo = (tipo: { nome: string; aplicativoId: string }, versao: number, esquema: unknown) => ({
  id: '01900000-0000-7000-8000-000000000001',
  tipo: tipo.nome,
  versao_do_esquema: versao,
  entidade_id: 'entidade-1',
  ocorrido_em: '2026-12-02T12:00:00.000Z',
  recebido_em: '2026-12-02T12:00:00.100Z',
  aplicativo_publicador_id: tipo.aplicativoId,
  assinatura_id: '01900000-0000-7000-8000-000000000002',
  dados: exemploDe(esquema),
});

/**
 * The event types any application may subscribe to (GET /tipos-de-evento): the active ones, by name,
 * each with its versions that are switched on, their schemas and an example body.
 */
export function catalogoDeTipos(db: DbClient) {
  return async (request: PageRequest) => {
    const where = { ativo: true };
    const [tipos, total] = await Promise.all([
      db.tipoDeEvento.findMany({
        where,
        orderBy: [{ nome: 'asc' }, { id: 'asc' }],
        include: { versoes: { where: { ativa: true }, orderBy: { versao: 'asc' } } },
        ...skipTake(request),
      }),
      db.tipoDeEvento.count({ where }),
    ]);
    const itens = tipos.map((tipo) => ({
      id: tipo.id,
      nome: tipo.nome,
      descricao: tipo.descricao,
      versoes: tipo.versoes.map((v) => ({
        versao: v.versao,
        descricao: v.descricao,
        esquema: v.esquema as Record<string, unknown>,
        exemplo: corpoDeExemplo(tipo, v.versao, v.esquema),
      })),
    }));
    return page(itens, request, total);
  };
}

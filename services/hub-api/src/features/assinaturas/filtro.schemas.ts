import { z } from 'zod';
import { entidadeId } from '../eventos/eventos.schemas';
import { LIMITES_DO_FILTRO } from './filtro';

const DESCRICAO = `A content filter: only events whose delivery body it matches are delivered to the subscription (null: every event). Keys are dotted paths into the body (dados.cliente.uf, entidade_id, tipo; a name of digits indexes an array) or the combinators $and, $or (non-empty arrays of filters) and $not (a filter). A path's value is a literal (deep equality; an object with keys all starting with $ is operators instead) or operators: $eq, $ne, $gt, $gte, $lt, $lte (numbers with numbers, strings with strings), $in, $nin (at most ${LIMITES_DO_FILTRO.literais} literals), $exists (boolean), $regex (RE2, found anywhere in a string, at most ${LIMITES_DO_FILTRO.regex} characters, at most ${LIMITES_DO_FILTRO.programa} instructions once compiled, at most ${LIMITES_DO_FILTRO.regexes} in a filter). A missing path matches only $exists: false, $ne and $nin. At most ${LIMITES_DO_FILTRO.bytes} bytes of JSON, ${LIMITES_DO_FILTRO.niveis} levels, ${LIMITES_DO_FILTRO.condicoes} conditions; anything else is 422 filtro_invalido with the caminho of the offending part.`;

/**
 * A filter as a request sends it: any JSON value passes here, so that every rule of the filter is
 * checked in one place (compilarFiltro) and refused with its own code, filtro_invalido; the
 * document says what is expected.
 */
export const filtroEntrada = z
  .unknown()
  .meta({ type: ['object', 'null'], additionalProperties: true, description: DESCRICAO });

/** A stored filter as the answers show it (jsonb: its keys may come back in another order). */
export const filtroSaida = z
  .record(z.string(), z.unknown())
  .nullable()
  .meta({ description: 'The content filter (null: every event); see POST /assinatura.' });

/**
 * The largest `dados` testar-filtro evaluates, as JSON text. A sample is enough to test a filter, and
 * a filter at its limits costs up to about 85 ms per MB of text it scans: without a bound, one reader
 * at the per-user rate limit could keep an instance's CPU busy (docs/decisions/content-filters.md).
 */
export const MAXIMO_DOS_DADOS_DE_TESTE = 64 * 1024;

/** Body of POST /assinatura/testar-filtro. */
export const testarFiltroCorpo = z
  .object({
    filtro: filtroEntrada,
    dados: z
      .json()
      .refine((v) => v !== undefined, 'is required')
      .refine(
        (v) => Buffer.byteLength(JSON.stringify(v) ?? '') <= MAXIMO_DOS_DADOS_DE_TESTE,
        `is larger than ${MAXIMO_DOS_DADOS_DE_TESTE / 1024} KiB as JSON text: test the filter on a smaller sample`,
      ),
    entidade_id: entidadeId.optional(),
  })
  .strict();

export const testarFiltroResposta = z.object({
  corresponde: z.boolean().describe('whether the filter matches the body { entidade_id, dados }'),
});

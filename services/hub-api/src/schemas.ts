import { clampedInt } from '@hub/http';
import { z } from 'zod';

/** Shapes shared by the features: pages, autocomplete queries, timestamps. */

export { paginaSchema as pagina } from '@hub/http';

/** pagina from 1, tamanho default 10 and at most 100 (autocomplete). */
export const autocompletePage = { pagina: clampedInt(1), tamanho: clampedInt(10, 100) };

/** Longest page of a list route; /filtro answers at most FILTRO_MAX items. */
export const LISTA_MAX = 500;
export const FILTRO_MAX = 1000;

/** An optional uuid filter of a query: a malformed one is a 400. */
export const queryId = z.uuid().optional();

/** Free text for descriptions: trimmed, NFC, empty is null, at most 2000 characters (code points). */
export const descricao = z
  .string()
  .transform((v) => v.trim().normalize('NFC'))
  .refine((v) => [...v].length <= 2000, 'must have at most 2000 characters')
  .transform((v) => (v === '' ? null : v))
  .meta({ maxLength: 2000 });

/** Largest value of a PostgreSQL integer (int4) column: zod integers bound to one stop here. */
export const INT4_MAX = 2_147_483_647;

export const iso = (date: Date) => date.toISOString();

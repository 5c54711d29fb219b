import { z } from 'zod';

export interface Pagina<T> {
  itens: T[];
  pagina: number;
  tamanho: number;
  total: number;
}

export interface PageRequest {
  pagina: number;
  tamanho: number;
}

/**
 * The largest value any integer query takes: PostgreSQL's integer. Routes whose contract says "no
 * maximum" (GET /auth tamanho) are held here, beyond any table they could page, so that an offset
 * (pagina - 1) × tamanho always fits the bigint OFFSET (skipTake holds it at 2^53).
 */
export const MAX_QUERY_INT = 2_147_483_647;

/**
 * A query number: must be an integer when present (400 otherwise, however many digits it has);
 * below 1 becomes 1; above `max` becomes `max` (architecture §3). The OpenAPI document shows it as an
 * integer with its maximum and default.
 */
export const clampedInt = (fallback: number, max = MAX_QUERY_INT) =>
  z
    .string()
    .regex(/^-?\d+$/, 'must be an integer')
    // Number() of a very long run of digits is ±Infinity, which the clamp turns into 1 or max.
    .transform((v) => Math.min(Math.max(Number(v), 1), max))
    .optional()
    .transform((v) => v ?? fallback)
    .meta({
      type: 'integer',
      pattern: undefined,
      maximum: max,
      // zod drops `default` from input schemas with transforms, so the description carries it too.
      default: fallback,
      description: `default ${fallback}; below 1 is taken as 1, above ${max} as ${max}`,
    });

/** `pagina` (from 1, default 1) and `tamanho` (default 10, capped at max). */
export function pageQuery(options: { maxTamanho?: number; tamanho?: number } = {}) {
  return z.object({
    pagina: clampedInt(1),
    tamanho: clampedInt(options.tamanho ?? 10, options.maxTamanho ?? MAX_QUERY_INT),
  });
}

/**
 * Rows to skip and take. Pages far past any table (pagina × tamanho beyond 2^53) are held at the
 * largest exact offset: still an empty page, never an integer the database refuses.
 */
/** The schema of a page of `item`, for the OpenAPI documents. */
export const paginaSchema = <T extends z.ZodType>(item: T) =>
  z.object({ itens: z.array(item), pagina: z.number(), tamanho: z.number(), total: z.number() });

export const skipTake = ({ pagina, tamanho }: PageRequest) => ({
  skip: Math.min((pagina - 1) * tamanho, Number.MAX_SAFE_INTEGER),
  take: tamanho,
});

export const page = <T>(itens: T[], request: PageRequest, total: number): Pagina<T> => ({
  itens,
  pagina: request.pagina,
  tamanho: request.tamanho,
  total,
});

/** A query boolean: exactly "true" or "false". */
export const queryBoolean = z.enum(['true', 'false']).transform((v) => v === 'true');

/** A trimmed, non-empty search text, or absent. */
export const queryText = (max = 200) =>
  z
    .string()
    .max(max)
    .transform((v) => v.trim())
    .optional()
    .transform((v) => (v ? v : undefined));

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
 * A query number: must be an integer when present (400 otherwise); below 1 becomes 1; above
 * `max` becomes `max` (DESIGN §3).
 */
export const clampedInt = (fallback: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^-?\d{1,15}$/, 'must be an integer')
    .transform((v) => Math.min(Math.max(Number(v), 1), max))
    .optional()
    .transform((v) => v ?? fallback);

/** `pagina` (from 1, default 1) and `tamanho` (default 10, capped at max). */
export function pageQuery(options: { maxTamanho?: number; tamanho?: number } = {}) {
  return z.object({
    pagina: clampedInt(1),
    tamanho: clampedInt(options.tamanho ?? 10, options.maxTamanho),
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

import { z } from 'zod';

/**
 * Characters that occupy no space on screen: soft hyphen, Mongolian vowel separator, zero-width
 * space/non-joiner/joiner, word joiner, BOM. Two names that differ only by these look the same, so
 * names are compared without them. SQL unique indexes use the same class:
 * `lower(regexp_replace(nome, '[\u00AD\u180E\u200B-\u200D\u2060\uFEFF]', '', 'g'))`.
 */
export const ZERO_WIDTH = /[\u00AD\u180E\u200B-\u200D\u2060\uFEFF]/gu;

/** Blank-looking letters (Hangul fillers, Braille blank) that \p{White_Space} does not cover. */
const BLANK_LETTERS = '\u115F\u1160\u3164\uFFA0\u2800';
const VISIBLE = new RegExp(`[^\\p{White_Space}\\p{Cc}\\p{Cf}\\p{Z}\\p{M}${BLANK_LETTERS}]`, 'u');
const CONTROL = /\p{Cc}/u;

/** The form two names are compared in: NFC, without zero-width characters, lower case. */
export function nomeChave(nome: string): string {
  return nome.normalize('NFC').replace(ZERO_WIDTH, '').toLowerCase();
}

/**
 * A name as people read it: trimmed, NFC-normalised, no control characters, at least one visible
 * character, at most `max` characters (code points, as PostgreSQL counts them).
 */
export const nomeTexto = (max: number) =>
  z
    .string()
    .transform((nome) => nome.trim().normalize('NFC'))
    .refine((nome) => !CONTROL.test(nome), 'must not contain control characters')
    .refine((nome) => VISIBLE.test(nome), 'must contain at least one visible character')
    .refine((nome) => [...nome].length <= max, `must have at most ${max} characters`)
    .meta({ maxLength: max });

import { emailAscii } from '@hub/auth';
import { ACOES, AREAS, type Permissoes, todasAsPermissoes } from '@hub/contracts';
import { z } from 'zod';
import type { Acesso } from '../../generated/prisma/client';

export const PERFIL_COLABORADOR = 'colaborador';
export const PERFIL_MASTER = 'master';
export const EMAIL_MAX = 160;

export const authSchema = z.object({
  id: z.string(),
  email: z.string(),
  perfil: z.string(),
  ativo: z.boolean(),
  master: z.boolean(),
  vinculado: z.boolean(),
  nome: z.string().nullable().optional(),
  termoauth_id: z.string().nullable().optional(),
  bloqueado_ate: z.string().nullable().optional(),
  ultimo_login_em: z.string().nullable().optional(),
  criado_em: z.string(),
  atualizado_em: z.string(),
});
export type Auth = z.infer<typeof authSchema>;

export const iso = (date: Date) => date.toISOString();
export const isoOrNull = (date: Date | null) => (date ? date.toISOString() : null);

export function toAuth(acesso: Acesso): Auth {
  return {
    id: acesso.id,
    email: acesso.email,
    perfil: acesso.perfil,
    ativo: acesso.ativo,
    master: acesso.master,
    vinculado: acesso.termoauthId !== null,
    nome: acesso.nome,
    termoauth_id: acesso.termoauthId,
    bloqueado_ate: isoOrNull(acesso.bloqueadoAte),
    ultimo_login_em: isoOrNull(acesso.ultimoLoginEm),
    criado_em: iso(acesso.criadoEm),
    atualizado_em: iso(acesso.atualizadoEm),
  };
}

/** Every area with its four actions; an action the profile does not grant is false. */
export function normalizePermissoes(
  stored: unknown,
): Required<{ [K in keyof Permissoes]-?: Record<(typeof ACOES)[number], boolean> }> {
  const source = (stored ?? {}) as Record<string, Record<string, unknown> | undefined>;
  return Object.fromEntries(
    AREAS.map((area) => [area, Object.fromEntries(ACOES.map((acao) => [acao, source[area]?.[acao] === true]))]),
  ) as never;
}

export const permissoesDoMaster = todasAsPermissoes;

/** Trimmed and lower-cased, as e-mails are stored and compared (docs/architecture.md §2). */
/** Trimmed, its ASCII letters lower-cased: String#toLowerCase would fold U+212A KELVIN SIGN onto "k" (see emailAscii). */
/** Only ASCII spaces are trimmed: String#trim also removes U+00A0, U+FEFF, U+3000…, which no e-mail has. */
export const normalizeEmail = (email: string) =>
  email.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '').replace(/[A-Z]+/g, (letras) => letras.toLowerCase());

const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The e-mail rules of POST and PATCH: the field, then the message for the erros list. */
export function emailProblem(email: string, companyDomain: string): { codigo: string; mensagem: string } | undefined {
  if (email.length === 0) return { codigo: 'dados_invalidos', mensagem: 'email is required' };
  if (email.length > EMAIL_MAX)
    return { codigo: 'dados_invalidos', mensagem: `email has at most ${EMAIL_MAX} characters` };
  if (!EMAIL_SHAPE.test(email)) return { codigo: 'dados_invalidos', mensagem: 'email is not an e-mail address' };
  // Compared lower-cased, and toLowerCase folds some non-ASCII letters onto ASCII ones (see emailAscii).
  if (!emailAscii(email))
    return {
      codigo: 'dados_invalidos',
      mensagem: 'email must be ASCII (an internationalised domain in its xn-- form)',
    };
  if (email.slice(email.lastIndexOf('@') + 1) !== companyDomain) {
    return { codigo: 'dominio_invalido', mensagem: `email must belong to the company domain ${companyDomain}` };
  }
  return undefined;
}

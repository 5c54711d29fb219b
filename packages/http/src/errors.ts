import { STATUS_CODES } from 'node:http';

/** One validation failure: a JSON Pointer into the input and a sentence about it. */
export interface ErroDeValidacao {
  caminho: string;
  mensagem: string;
}

export const MAX_ERROS = 50;

/**
 * The one error family of the platform. `codigo` is stable snake_case that clients may switch on;
 * `detail` is for people. Everything thrown that is not an AppError is a 500.
 */
export class AppError extends Error {
  override name = 'AppError';

  constructor(
    readonly status: number,
    readonly codigo: string,
    readonly detail: string,
    readonly erros?: ErroDeValidacao[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }

  get title(): string {
    return STATUS_CODES[this.status] ?? 'Error';
  }
}

export const badRequest = (codigo: string, detail: string) => new AppError(400, codigo, detail);
export const unauthorized = (detail: string, codigo = 'nao_autenticado') =>
  new AppError(401, codigo, detail, undefined, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = (detail: string, codigo = 'sem_permissao') => new AppError(403, codigo, detail);
export const notFound = (what: string, codigo = 'nao_encontrado') => new AppError(404, codigo, `${what} not found`);
export const conflict = (codigo: string, detail: string) => new AppError(409, codigo, detail);
export const unprocessable = (codigo: string, detail: string, erros?: ErroDeValidacao[]) =>
  new AppError(422, codigo, detail, erros?.slice(0, MAX_ERROS));

/** A single-field rule violation, e.g. `invalidField('/email', 'dominio_invalido', '...')`. */
export const invalidField = (caminho: string, codigo: string, mensagem: string) =>
  unprocessable(codigo, mensagem, [{ caminho, mensagem }]);

/** RFC 9457 body of an error. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  codigo: string;
  erros?: ErroDeValidacao[];
  erro_id?: string;
}

export const PROBLEM_TYPE_BASE = 'urn:event-hub:problema:';

export function problemOf(error: AppError): Problem {
  return {
    type: PROBLEM_TYPE_BASE + error.codigo,
    title: error.title,
    status: error.status,
    detail: error.detail,
    codigo: error.codigo,
    ...(error.erros ? { erros: error.erros } : {}),
  };
}

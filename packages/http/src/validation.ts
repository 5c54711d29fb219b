import type { z } from 'zod';
import { type ErroDeValidacao, MAX_ERROS } from './errors';

/** JSON Pointer of a path, as RFC 6901 writes it: ["dados", "itens", 0] is "/dados/itens/0". */
export function pointer(path: ReadonlyArray<PropertyKey>): string {
  return path.map((part) => '/' + String(part).replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}

export function zodErros(error: z.ZodError, prefix: PropertyKey[] = []): ErroDeValidacao[] {
  return error.issues.slice(0, MAX_ERROS).map((issue) => ({
    caminho: pointer([...prefix, ...issue.path]),
    mensagem: issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message,
  }));
}

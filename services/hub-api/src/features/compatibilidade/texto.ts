import { fullFormats } from 'ajv-formats/dist/formats';
import { RE2JS } from 're2js';
import { type Contexto, indecidivel, mudanca } from './contexto';
import { type Erro, type No, numero, valor } from './no';
import { mostrar, valorExato } from './valores';

function extremo(a: No[], chave: string, maior: boolean): number | undefined {
  const todos = a.map((c) => numero(c, chave)).filter((v): v is number => v !== undefined);
  if (todos.length === 0) return undefined;
  return maior ? Math.max(...todos) : Math.min(...todos);
}

/** Whether the hub's ajv (RE2 for patterns) accepts the string under the pattern; undefined if it cannot compile. */
function casa(padrao: string, v: string): boolean | undefined {
  try {
    return RE2JS.compile(padrao).test(v);
  } catch {
    return undefined;
  }
}

/** Whether ajv-formats (full mode, as the hub registers it) accepts the value under the format. */
export function formatoAceita(formato: string, v: unknown): boolean | undefined {
  const definicao = (fullFormats as Record<string, unknown>)[formato];
  if (definicao === undefined) return undefined;
  const regra =
    definicao instanceof RegExp || typeof definicao === 'function'
      ? definicao
      : (definicao as { validate?: unknown }).validate;
  if (regra instanceof RegExp) return typeof v === 'string' && regra.test(v);
  if (typeof regra === 'function') return Boolean((regra as (x: unknown) => boolean)(v));
  return undefined;
}

/** A format ajv applies to numbers (int32, int64, float, double), not to strings. */
export function formatoDeNumeros(formato: string): boolean {
  const definicao = (fullFormats as Record<string, unknown>)[formato];
  return typeof definicao === 'object' && definicao !== null && (definicao as { type?: unknown }).type === 'number';
}

/** The string slice: lengths, pattern and format. Two different patterns are not compared: refused. */
export function texto(a: No[], b: No, ctx: Contexto): Erro[] {
  const exato = valorExato(a);
  const v = exato && typeof exato.v === 'string' ? exato.v : undefined;
  return [...comprimentos(a, b, ctx), ...padraoDoTexto(a, b, ctx, v), ...formatoDoTexto(a, b, ctx, v)];
}

/** minLength and maxLength: a bound added or tightened on one side of the comparison. */
function comprimentos(a: No[], b: No, ctx: Contexto): Erro[] {
  const erros: Erro[] = [];
  const minB = numero(b, 'minLength');
  const minA = extremo(a, 'minLength', true);
  if (minB !== undefined && (minA ?? 0) < minB) {
    erros.push(
      mudanca(
        ctx,
        `${(a[0] ?? b).caminho}/minLength`,
        `${b.caminho}/minLength`,
        minA === undefined ? 'minLength added' : 'minLength raised',
        minA === undefined ? 'minLength removed' : 'minLength lowered',
      ),
    );
  }
  const maxB = numero(b, 'maxLength');
  const maxA = extremo(a, 'maxLength', false);
  if (maxB !== undefined && (maxA === undefined || maxA > maxB)) {
    erros.push(
      mudanca(
        ctx,
        `${(a[0] ?? b).caminho}/maxLength`,
        `${b.caminho}/maxLength`,
        maxA === undefined ? 'maxLength added' : 'maxLength lowered',
        maxA === undefined ? 'maxLength removed' : 'maxLength raised',
      ),
    );
  }
  return erros;
}

/** The pattern: a value fixed on the other side must match it; otherwise the same pattern on both. */
function padraoDoTexto(a: No[], b: No, ctx: Contexto, v: string | undefined): Erro[] {
  const erros: Erro[] = [];
  const padrao = valor(b, 'pattern');
  if (typeof padrao === 'string') {
    const padroesDeA = a.map((c) => valor(c, 'pattern')).filter((p): p is string => typeof p === 'string');
    const onde = `${b.caminho}/pattern`;
    if (v !== undefined) {
      if (casa(padrao, v) !== true)
        erros.push(
          mudanca(
            ctx,
            `${a[0]!.caminho}${onde.slice(b.caminho.length)}`,
            onde,
            `pattern no longer accepts ${mostrar(v)}`,
            `value ${mostrar(v)} does not match the old pattern`,
          ),
        );
    } else if (!padroesDeA.includes(padrao)) {
      erros.push(
        padroesDeA.length === 0
          ? mudanca(
              ctx,
              `${(a[0] ?? b).caminho}${onde.slice(b.caminho.length)}`,
              onde,
              'pattern added',
              'pattern removed',
            )
          : indecidivel(
              ctx,
              a[0]!,
              onde,
              `two different patterns (${mostrar(padroesDeA[0])} and ${mostrar(padrao)}) cannot be compared`,
            ),
      );
    }
  }
  return erros;
}

/** The format: a value fixed on the other side must be of it; otherwise the same format on both. */
function formatoDoTexto(a: No[], b: No, ctx: Contexto, v: string | undefined): Erro[] {
  const erros: Erro[] = [];
  const formato = valor(b, 'format');
  if (typeof formato === 'string') {
    const onde = `${b.caminho}/format`;
    if (v !== undefined) {
      const aceita = formatoAceita(formato, v);
      if (aceita === undefined)
        erros.push(indecidivel(ctx, a[0]!, onde, `the format ${formato} is not one the check knows`));
      else if (!aceita)
        erros.push(
          mudanca(
            ctx,
            `${a[0]!.caminho}${onde.slice(b.caminho.length)}`,
            onde,
            `format ${formato} no longer accepts ${mostrar(v)}`,
            `value ${mostrar(v)} is not of the old format ${formato}`,
          ),
        );
    } else if (!a.some((c) => valor(c, 'format') === formato)) {
      const antes = a.some((c) => valor(c, 'format') !== undefined);
      erros.push(
        mudanca(
          ctx,
          `${(a[0] ?? b).caminho}${onde.slice(b.caminho.length)}`,
          onde,
          antes ? 'format changed' : `format added: ${formato}`,
          antes ? 'format changed' : `format removed: ${formato}`,
        ),
      );
    }
  }
  return erros;
}

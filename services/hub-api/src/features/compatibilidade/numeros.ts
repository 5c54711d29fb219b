import { type Contexto, mudanca } from './contexto';
import type { Erro, No } from './no';
import { numero, valor } from './no';
import { formatoAceita, formatoDeNumeros } from './texto';
import { valorExato } from './valores';

interface Limite {
  v: number;
  exclusivo: boolean;
  chave: string;
}

/** The tightest bound of a node's side (`baixo`: minimum/exclusiveMinimum). */
function limiteDe(no: No, baixo: boolean): Limite | undefined {
  const [incl, excl] = baixo ? ['minimum', 'exclusiveMinimum'] : ['maximum', 'exclusiveMaximum'];
  const candidatos: Limite[] = [];
  const i = numero(no, incl);
  const e = numero(no, excl);
  if (i !== undefined) candidatos.push({ v: i, exclusivo: false, chave: incl });
  if (e !== undefined) candidatos.push({ v: e, exclusivo: true, chave: excl });
  return candidatos.reduce<Limite | undefined>(
    (m, c) => (m === undefined || maisApertado(c, m, baixo) ? c : m),
    undefined,
  );
}

/** Whether bound x excludes at least what y excludes. */
function maisApertado(x: Limite, y: Limite, baixo: boolean): boolean {
  if (x.v !== y.v) return baixo ? x.v > y.v : x.v < y.v;
  return x.exclusivo || !y.exclusivo;
}

/** On integers, an exclusive bound is the inclusive one next to it. */
function inteiro(l: Limite, baixo: boolean): Limite {
  if (baixo) return { ...l, v: l.exclusivo ? Math.floor(l.v) + 1 : Math.ceil(l.v), exclusivo: false };
  return { ...l, v: l.exclusivo ? Math.ceil(l.v) - 1 : Math.floor(l.v), exclusivo: false };
}

function limiteDeTodos(a: No[], baixo: boolean, soInteiros: boolean): Limite | undefined {
  let melhor: Limite | undefined;
  for (const no of a) {
    const l = limiteDe(no, baixo);
    if (!l) continue;
    const c = soInteiros ? inteiro(l, baixo) : l;
    if (!melhor || maisApertado(c, melhor, baixo)) melhor = c;
  }
  return melhor;
}

/** ajv's multipleOf exactly: data / m must read as an integer through parseInt. */
const multiploParaAjv = (v: number, m: number) => {
  const r = v / m;
  return m !== 0 && r === Number.parseInt(String(r), 10);
};

/** The number slice: A's interval within B's, and B's multipleOf proven. */
export function numeros(a: No[], b: No, tipo: 'integer' | 'number', ctx: Contexto): Erro[] {
  const erros: Erro[] = [];
  const soInteiros = tipo === 'integer';
  for (const baixo of [true, false]) {
    const deB = limiteDeTodos([b], baixo, soInteiros);
    if (!deB) continue;
    const deA = limiteDeTodos(a, baixo, soInteiros);
    const onde = `${b.caminho}/${deB.chave}`;
    const nome = baixo ? 'minimum' : 'maximum';
    if (!deA) {
      erros.push(
        mudanca(
          ctx,
          `${(a[0] ?? b).caminho}${onde.slice(b.caminho.length)}`,
          onde,
          `${deB.chave} added`,
          `${nome} removed`,
        ),
      );
    } else if (!maisApertado(deA, deB, baixo)) {
      const [seB, seA] = baixo ? ['raised', 'lowered'] : ['lowered', 'raised'];
      erros.push(
        mudanca(ctx, `${(a[0] ?? b).caminho}${onde.slice(b.caminho.length)}`, onde, `${nome} ${seB}`, `${nome} ${seA}`),
      );
    }
  }
  erros.push(...formatoNumerico(a, b, ctx));
  const m = numero(b, 'multipleOf');
  if (m !== undefined) {
    const exato = valorExato(a);
    const provado = exato
      ? typeof exato.v === 'number' && multiploParaAjv(exato.v, m)
      : a.some((c) => numero(c, 'multipleOf') === m);
    if (!provado) {
      const antes = a.some((c) => numero(c, 'multipleOf') !== undefined);
      const seB = exato
        ? `multipleOf no longer accepts ${String(exato.v)}`
        : antes
          ? 'multipleOf changed'
          : 'multipleOf added';
      const seA = exato
        ? `value ${String(exato.v)} is not a multiple of ${m}`
        : antes
          ? 'multipleOf changed'
          : 'multipleOf removed';
      erros.push(mudanca(ctx, `${(a[0] ?? b).caminho}/multipleOf`, `${b.caminho}/multipleOf`, seB, seA));
    }
  }
  return erros;
}

/**
 * B's `format` when ajv applies it to numbers (int32 bounds, int64 refusing fractions…): proven only
 * by the same format in A, or by A's exact value passing it. A string format leaves numbers alone.
 */
function formatoNumerico(a: No[], b: No, ctx: Contexto): Erro[] {
  const formato = valor(b, 'format');
  if (typeof formato !== 'string' || !formatoDeNumeros(formato)) return [];
  const exato = valorExato(a);
  const provado = exato ? formatoAceita(formato, exato.v) === true : a.some((c) => valor(c, 'format') === formato);
  if (provado) return [];
  const antes = a.some((c) => valor(c, 'format') !== undefined);
  return [
    mudanca(
      ctx,
      `${(a[0] ?? b).caminho}/format`,
      `${b.caminho}/format`,
      exato
        ? `format ${formato} no longer accepts ${String(exato.v)}`
        : antes
          ? 'format changed'
          : `format added: ${formato}`,
      exato
        ? `value ${String(exato.v)} is not of the old format ${formato}`
        : antes
          ? 'format changed'
          : `format removed: ${formato}`,
    ),
  ];
}

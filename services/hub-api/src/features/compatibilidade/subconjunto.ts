import { type Contexto, caminhoNovo, indecidivel, mudanca, PASSOS_MAX } from './contexto';
import { fatias } from './fatias';
import {
  alvo,
  eObjeto,
  filho,
  type Erro,
  igual,
  type No,
  sem,
  temIdAninhado,
  temReferencia,
  universal,
  valor,
} from './no';
import { naoDe, umDeCada, umDosRamos } from './uniao';

/**
 * Is every document valid under all of `a` (a conjunction of subschemas) valid under `b`? The
 * answer is a list of findings: empty means proven. Every step is conservative: the A side may be
 * widened (a keyword the checker does not read is dropped, which only adds documents), the B side
 * is never widened (a keyword it cannot prove against A is a finding), so an empty answer is a proof.
 */
export function subconjunto(a: No[], b: No, ctx: Contexto): Erro[] {
  ctx.passos += 1;
  if (ctx.passos > PASSOS_MAX)
    return [indecidivel(ctx, a[0] ?? b, b, `the schemas take more than ${PASSOS_MAX} comparisons`)];
  if (universal(b)) return [];
  if (a.length === 1 && igual(a[0]!.s, b.s) && !temReferencia(b.s)) return [];
  const expandido = expandir(a, ctx);
  if (expandido === 'vazio') return [];
  if (Array.isArray(expandido[0])) {
    // A is a union: every branch must fit.
    return (expandido as No[][]).flatMap((ramo) => subconjunto(ramo, b, ctx));
  }
  return comB(expandido as No[], b, ctx);
}

/** Whether B holds a keyword the conjuncts of A hold too, with the same value and no $ref in it. */
const mesmaPalavra = (a: No[], b: No, chave: string) =>
  a.some((c) => igual(valor(c, chave), valor(b, chave))) && !temReferencia(valor(b, chave));

function comB(a: No[], b: No, ctx: Contexto): Erro[] {
  if (universal(b)) return [];
  if (b.s === false) {
    return [mudanca(ctx, caminhoNovo(ctx, a, b), b, 'accepts no document any more', 'accepted no document before')];
  }
  if (a.some((c) => igual(c.s, b.s)) && !temReferencia(b.s)) return [];
  const s = b.s as Record<string, unknown>;
  if (s.$ref !== undefined) return referenciaEmB(a, b, ctx);
  if (Array.isArray(s.allOf)) {
    const membros = s.allOf.map((_, i) => filho(b, 'allOf', i));
    return [...membros.flatMap((m) => subconjunto(a, m, ctx)), ...subconjunto(a, sem(b, 'allOf'), ctx)];
  }
  for (const chave of ['anyOf', 'oneOf', 'not'] as const) {
    if (s[chave] === undefined) continue;
    const regra = chave === 'anyOf' ? umDosRamos : chave === 'oneOf' ? umDeCada : naoDe;
    const proprio = mesmaPalavra(a, b, chave) ? [] : regra(a, b, ctx);
    return [...proprio, ...subconjunto(a, sem(b, chave), ctx)];
  }
  return fatias(a, b, ctx);
}

function referenciaEmB(a: No[], b: No, ctx: Contexto): Erro[] {
  const destino = alvo(b);
  if (!destino && temIdAninhado(b.raiz.esquema))
    return [
      indecidivel(ctx, caminhoNovo(ctx, a, b), b, 'a subschema declares $id, which changes where a $ref resolves'),
    ];
  if (!destino)
    return [
      indecidivel(ctx, caminhoNovo(ctx, a, b), b, `the $ref ${String(valor(b, '$ref'))} is not a local JSON Pointer`),
    ];
  const chave = `${a.map((c) => c.caminho).join(',')}|${destino.caminho}`;
  const inicio = ctx.emCurso.get(chave);
  if (inicio !== undefined) {
    // The same pair again: proven by induction on the document's depth once it has descended.
    if (ctx.profundidade > inicio) return [];
    return [indecidivel(ctx, caminhoNovo(ctx, a, b), b, 'a $ref cycle that does not descend into the document')];
  }
  ctx.emCurso.set(chave, ctx.profundidade);
  try {
    return [...subconjunto(a, destino, ctx), ...subconjunto(a, sem(b, '$ref'), ctx)];
  } finally {
    ctx.emCurso.delete(chave);
  }
}

const REFERENCIAS_MAX = 64;

/**
 * A's conjuncts with $ref, allOf, anyOf and oneOf taken apart: a flat conjunction, or a union of
 * them (the first anyOf/oneOf found, distributed), or 'vazio' when a conjunct accepts nothing.
 * A $ref it cannot follow is dropped, and so are draft-07's siblings of a $ref (ignored there):
 * dropping a conjunct of A only adds documents, so the answer stays a proof.
 */
function expandir(a: No[], ctx: Contexto): No[] | No[][] | 'vazio' {
  const pendentes = [...a];
  const planos: No[] = [];
  let referencias = 0;
  for (let no = pendentes.shift(); no; no = pendentes.shift()) {
    if (no.s === false) return 'vazio';
    if (universal(no) || !eObjeto(no.s)) continue;
    const s = no.s;
    if (s.$ref !== undefined) {
      referencias += 1;
      const destino = referencias <= REFERENCIAS_MAX ? alvo(no) : undefined;
      if (destino) pendentes.push(destino);
      if (!no.raiz.draft07) pendentes.push(sem(no, '$ref'));
      continue;
    }
    if (Array.isArray(s.allOf)) {
      for (let i = 0; i < s.allOf.length; i += 1) pendentes.push(filho(no, 'allOf', i));
      pendentes.push(sem(no, 'allOf'));
      continue;
    }
    const chave = Array.isArray(s.anyOf) ? 'anyOf' : Array.isArray(s.oneOf) ? 'oneOf' : undefined;
    if (chave) {
      // oneOf's documents are among anyOf's: reading it as anyOf only widens A.
      const resto = [...planos, ...pendentes, sem(no, chave)];
      return (s[chave] as unknown[]).map((_, i) => [...resto, filho(no!, chave, i)]);
    }
    planos.push(no);
  }
  void ctx;
  return planos;
}

import { type Contexto, caminhoNovo, indecidivel, mudanca } from './contexto';
import { disjuntos } from './disjuncao';
import { type Erro, filho, type No, sintetico, valor } from './no';
import { subconjunto } from './subconjunto';
import { esquemaDoValor, tiposDeTodos, valoresDe } from './valores';

/**
 * A split into pieces that can each be placed in one branch: one piece per value when A is finite,
 * else one per JSON type (a `type` conjunct narrows A to it).
 */
function pedacos(a: No[], b: No): No[][] {
  const valores = valoresDe(a);
  const onde = a[0] ?? b;
  if (valores) return valores.map((v) => [esquemaDoValor(v, onde)]);
  const tipos = tiposDeTodos(a);
  const lista = [...tipos].filter((t) => !(t === 'integer' && tipos.has('number')));
  return lista.map((t) => [...a, sintetico({ type: t }, onde)]);
}

const ramos = (b: No, chave: string): No[] => (valor(b, chave) as unknown[]).map((_, i) => filho(b, chave, i));

/** The findings of the branch that fits best (fewest), to say what would have to change. */
function melhor(tentativas: Erro[][]): Erro[] {
  return tentativas.reduce((m, t) => (t.length < m.length ? t : m), tentativas[0] ?? []);
}

/** B is an anyOf: each piece of A fits one branch. */
export function umDosRamos(a: No[], b: No, ctx: Contexto): Erro[] {
  const deB = ramos(b, 'anyOf');
  const inteiro = deB.map((r) => subconjunto(a, r, ctx));
  if (inteiro.some((t) => t.length === 0)) return [];
  return pedacos(a, b).flatMap((p) => {
    const tentativas = deB.map((r) => subconjunto(p, r, ctx));
    return tentativas.some((t) => t.length === 0) ? [] : melhor(tentativas);
  });
}

/** B is a oneOf: each piece of A fits one branch and is proven apart from every other branch. */
export function umDeCada(a: No[], b: No, ctx: Contexto): Erro[] {
  const deB = ramos(b, 'oneOf');
  return pedacos(a, b).flatMap((p) => {
    const tentativas = deB.map((r) => subconjunto(p, r, ctx));
    const i = tentativas.findIndex((t) => t.length === 0);
    if (i < 0) return melhor(tentativas);
    const outros = deB.filter((_, j) => j !== i);
    if (outros.every((r) => disjuntos(p, r, ctx))) return [];
    return [
      indecidivel(
        ctx,
        caminhoNovo(ctx, p, b),
        `${b.caminho}/oneOf`,
        'a document may match more than one branch of oneOf (the branches are not proven apart)',
      ),
    ];
  });
}

/** B is a `not`: A and its subschema share no document. */
export function naoDe(a: No[], b: No, ctx: Contexto): Erro[] {
  const negado = filho(b, 'not');
  if (disjuntos(a, negado, ctx)) return [];
  const antes = a.some((c) => valor(c, 'not') !== undefined);
  if (antes) return [indecidivel(ctx, caminhoNovo(ctx, a, b), negado, 'the subschema of not changed')];
  return [mudanca(ctx, caminhoNovo(ctx, a, b), negado, 'not added', 'not removed')];
}

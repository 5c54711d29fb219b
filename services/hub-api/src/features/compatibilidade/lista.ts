import { type Contexto, mudanca } from './contexto';
import { type Erro, filho, igual, type No, numero, valor } from './no';
import { subconjunto } from './subconjunto';
import { valorExato } from './valores';

/** The positional items (2020-12 prefixItems; draft-07 items as an array). */
function prefixo(no: No): No[] {
  const chave = no.raiz.draft07 ? 'items' : 'prefixItems';
  const lista = valor(no, chave);
  return Array.isArray(lista) ? lista.map((_, i) => filho(no, chave, i)) : [];
}

/** The items after the positional ones (2020-12 items; draft-07 additionalItems after an array). */
function resto(no: No): No {
  const items = valor(no, 'items');
  if (no.raiz.draft07 && Array.isArray(items)) return filho(no, 'additionalItems');
  return filho(no, 'items');
}

const itemEm = (no: No, i: number): No => prefixo(no)[i] ?? resto(no);

/** How many items A's arrays can hold at most (maxItems, or positional items closed by items: false). */
function maximoDe(a: No[]): number {
  let maximo = Number.POSITIVE_INFINITY;
  for (const c of a) {
    const m = numero(c, 'maxItems');
    if (m !== undefined) maximo = Math.min(maximo, m);
    if (resto(c).s === false) maximo = Math.min(maximo, prefixo(c).length);
  }
  return maximo;
}

/** The array slice: item by item, then the rest, then the counts and uniqueItems. */
export function lista(a: No[], b: No, ctx: Contexto): Erro[] {
  const erros: Erro[] = [];
  const maximo = maximoDe(a);
  const n = Math.max(prefixo(b).length, ...a.map((c) => prefixo(c).length));
  ctx.profundidade += 1;
  try {
    for (let i = 0; i <= n && i < maximo; i += 1) {
      erros.push(
        ...subconjunto(
          a.map((c) => itemEm(c, i)),
          itemEm(b, i),
          ctx,
        ),
      );
    }
  } finally {
    ctx.profundidade -= 1;
  }
  const minB = numero(b, 'minItems');
  const minA = Math.max(0, ...a.map((c) => numero(c, 'minItems') ?? 0));
  if (minB !== undefined && minA < minB) {
    erros.push(
      mudanca(ctx, `${(a[0] ?? b).caminho}/minItems`, `${b.caminho}/minItems`, 'minItems raised', 'minItems lowered'),
    );
  }
  const maxB = numero(b, 'maxItems');
  if (maxB !== undefined && maximo > maxB) {
    erros.push(
      mudanca(ctx, `${(a[0] ?? b).caminho}/maxItems`, `${b.caminho}/maxItems`, 'maxItems lowered', 'maxItems raised'),
    );
  }
  if (valor(b, 'uniqueItems') === true && !unicos(a, maximo)) {
    erros.push(
      mudanca(
        ctx,
        `${(a[0] ?? b).caminho}/uniqueItems`,
        `${b.caminho}/uniqueItems`,
        'uniqueItems added',
        'uniqueItems removed',
      ),
    );
  }
  return erros;
}

function unicos(a: No[], maximo: number): boolean {
  if (maximo <= 1 || a.some((c) => valor(c, 'uniqueItems') === true)) return true;
  const exato = valorExato(a);
  if (!exato || !Array.isArray(exato.v)) return false;
  const itens = exato.v;
  return itens.every((x, i) => itens.every((y, j) => j <= i || !igual(x, y)));
}

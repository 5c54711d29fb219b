import { pointer } from '@hub/http';
import { DADOS_PROFUNDIDADE_MAX } from './limites';
import { eNo, grafoNoLugar, type No } from './recursao';

/**
 * How many subschemas one value of `dados` can be checked against, at most: a schema where that
 * number multiplies (references that fan out, `{ "anyOf": [{ "$ref": "#/$defs/a" }, { "$ref":
 * "#/$defs/a" }] }` twenty levels deep, or a recursion that descends twice per level, `{ "items":
 * { "$ref": "#" }, "contains": { "$ref": "#" } }`) costs 2^n checks for one number, on the event
 * loop. Ordinary schemas stay in the tens; a flat `anyOf` or `enum` counts its branches or values.
 */
export const AVALIACOES_POR_VALOR_MAX = 10_000;

/** Subschemas applied to every child of an array, or to any child of an object whatever its key. */
const EM_CADA_ITEM = ['items', 'contains', 'unevaluatedItems'];
const EM_CADA_PROPRIEDADE = ['additionalProperties', 'unevaluatedProperties', 'propertyNames'];
/** Subschemas of which one (the one the child's position or key picks) applies to a child. */
const POR_POSICAO = ['prefixItems', 'items', 'additionalItems'];
const POR_CHAVE = ['properties'];

const subesquema = (valor: unknown): No[] => (eNo(valor) ? [valor] : []);
const lista = (valor: unknown): No[] => (Array.isArray(valor) ? valor.filter(eNo) : []);
const valores = (valor: unknown): No[] => (eNo(valor) ? Object.values(valor).filter(eNo) : []);

/** What one subschema applies to the children of an array and of an object. */
function filhos(no: No) {
  return {
    array: {
      todos: EM_CADA_ITEM.flatMap((k) => subesquema(no[k])),
      umDe: POR_POSICAO.flatMap((k) => lista(no[k]).concat(k === 'items' ? [] : subesquema(no[k]))),
    },
    objeto: {
      todos: [...EM_CADA_PROPRIEDADE.flatMap((k) => subesquema(no[k])), ...valores(no.patternProperties)],
      umDe: POR_CHAVE.flatMap((k) => valores(no[k])),
    },
  };
}

/** Where each object of the schema is, as a JSON pointer under /esquema (the first path found). */
function caminhos(raiz: No): Map<No, string> {
  const achados = new Map<No, string>();
  const pendentes: [unknown, string][] = [[raiz, '/esquema']];
  for (let atual = pendentes.pop(); atual; atual = pendentes.pop()) {
    const [valor, caminho] = atual;
    if (typeof valor !== 'object' || valor === null) continue;
    if (eNo(valor)) {
      if (achados.has(valor)) continue;
      achados.set(valor, caminho);
    }
    for (const [chave, filho] of Object.entries(valor)) pendentes.push([filho, caminho + pointer([chave])]);
  }
  return achados;
}

/**
 * The subschema where checks multiply past AVALIACOES_POR_VALOR_MAX, as a pointer under /esquema,
 * or undefined when the schema stays within it. Expects a schema without endless recursion
 * (recursaoSemFim): the same-instance graph is then acyclic.
 *
 * For a value k levels below the one a subschema applies to, `custo[k]` bounds the checks that
 * subschema leads to: at k = 0, itself (weighted by its `enum`) plus what it applies in place;
 * below, what it applies in place plus, for the worst child (an array's or an object's), every
 * subschema applied to all children and the largest of those a position or key picks. Counted to
 * the deepest `dados` accepted, with explicit stacks only.
 */
export function avaliacoesDemais(esquema: unknown): string | undefined {
  if (!eNo(esquema)) return undefined;
  const { nos, seguintes } = grafoNoLugar(esquema);

  // Children before parents along the same-instance edges (reference targets included).
  const ordem: No[] = [];
  const estado = new Map<No, boolean>();
  for (const inicio of nos) {
    if (estado.has(inicio)) continue;
    const pilha: [No, No[]][] = [[inicio, seguintes(inicio)]];
    estado.set(inicio, false);
    while (pilha.length > 0) {
      const [no, restantes] = pilha[pilha.length - 1]!;
      const proximo = restantes.pop();
      if (proximo === undefined) {
        estado.set(no, true);
        ordem.push(no);
        pilha.pop();
      } else if (!estado.has(proximo)) {
        estado.set(proximo, false);
        pilha.push([proximo, seguintes(proximo)]);
      }
    }
  }

  const teto = AVALIACOES_POR_VALOR_MAX + 1;
  const somar = (a: number, b: number) => Math.min(teto, a + b);
  const indice = new Map(ordem.map((no, i) => [no, i]));
  const indices = (nos: No[]) => nos.map((no) => indice.get(no)).filter((i) => i !== undefined);
  const noLugar = ordem.map((no) => indices(seguintes(no)));
  const proprio = ordem.map((no) => 1 + (Array.isArray(no.enum) ? no.enum.length : 0));
  const deFilhos = ordem.map((no) => {
    const { array, objeto } = filhos(no);
    return {
      array: { todos: indices(array.todos), umDe: indices(array.umDe) },
      objeto: { todos: indices(objeto.todos), umDe: indices(objeto.umDe) },
    };
  });
  const excedeu = (i: number) => caminhos(esquema).get(ordem[i]!) ?? '/esquema';

  // Level 0: the value itself, whatever its type.
  let anterior = new Array<number>(ordem.length).fill(0);
  for (let i = 0; i < ordem.length; i++) {
    let custo = proprio[i]!;
    for (const outro of noLugar[i]!) custo = somar(custo, anterior[outro]!);
    anterior[i] = custo;
    if (custo >= teto) return excedeu(i);
  }
  // Below, the value is an array or an object, and every subschema applied to it in place sees the
  // same one, so the two are counted apart; a child costs the worse of the two.
  for (let k = 1; k <= DADOS_PROFUNDIDADE_MAX; k++) {
    const nivel = new Array<number>(ordem.length).fill(0);
    for (const tipo of ['array', 'objeto'] as const) {
      const atual = new Array<number>(ordem.length).fill(0);
      for (let i = 0; i < ordem.length; i++) {
        const { todos, umDe } = deFilhos[i]![tipo];
        let custo = 0;
        for (const outro of noLugar[i]!) custo = somar(custo, atual[outro]!);
        for (const filho of todos) custo = somar(custo, anterior[filho]!);
        let maior = 0;
        for (const filho of umDe) maior = Math.max(maior, anterior[filho]!);
        custo = somar(custo, maior);
        atual[i] = custo;
        if (custo >= teto) return excedeu(i);
        nivel[i] = Math.max(nivel[i]!, custo);
      }
    }
    // Deeper levels would repeat this one (a recursion that does not multiply, or nothing left).
    if (nivel.every((custo, i) => custo === anterior[i])) break;
    anterior = nivel;
  }
  return undefined;
}

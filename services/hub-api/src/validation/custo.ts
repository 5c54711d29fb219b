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
 * What validation costs, per value of `dados`, in checks: a check is one subschema applied to one
 * value (a branch of an `anyOf` that fails costs ajv an error object, ~40 ns, the dearest step of
 * a validation). A `pattern` tested costs as much as PESO_DO_PADRAO checks (RE2 in JavaScript,
 * ~0.7 µs a test); the lists a subschema walks for each value it checks (`enum` values, the names
 * of `properties`, `required`, `dependentRequired`, `dependentSchemas`) cost a check per
 * LISTA_POR_VERIFICACAO entries (a comparison or a property lookup, 1–3 ns each).
 */
export const PESO_DO_PADRAO = 20;
/**
 * Numbering one value for `uniqueItems` (itens-unicos.ts: a key built and looked up, for the value
 * and, in an object, for its key; ~0.4 µs each).
 */
export const PESO_DO_UNICO = 20;
const LISTA_POR_VERIFICACAO = 8;

const tamanho = (valor: unknown): number =>
  Array.isArray(valor) ? valor.length : eNo(valor) ? Object.keys(valor).length : 0;

/** The checks a subschema costs on the value it is applied to, apart from its subschemas. */
function proprio(no: No): number {
  let lista = tamanho(no.enum) + tamanho(no.properties) + tamanho(no.required);
  for (const chave of ['dependentRequired', 'dependentSchemas', 'dependencies']) {
    lista += tamanho(no[chave]);
    if (eNo(no[chave])) for (const nomes of Object.values(no[chave])) lista += tamanho(nomes);
  }
  return 1 + Math.ceil(lista / LISTA_POR_VERIFICACAO) + (typeof no.pattern === 'string' ? PESO_DO_PADRAO : 0);
}

export interface PerfilDeCusto {
  /** The subschema where one value's checks pass AVALIACOES_POR_VALOR_MAX (a pointer under /esquema). */
  excedeu?: string;
  /**
   * `porNivel[k]`: the checks one value k levels deep in `dados` costs at most (k = 0 is `dados`
   * itself), up to DADOS_PROFUNDIDADE_MAX. Capped just above ORCAMENTO_POR_CORPO.
   */
  porNivel: number[];
}

/**
 * The checks one value of `dados` can cost, level by level. Expects a schema without endless
 * recursion (recursaoSemFim): the same-instance graph is then acyclic.
 *
 * For a value k levels below the one a subschema applies to, `custo[k]` bounds the checks that
 * subschema leads to: at k = 0, itself (`proprio`) plus what it applies in place; below, what it
 * applies in place plus, for the worst child (an array's or an object's), every subschema applied
 * to all children and the largest of those a position or key picks (and each pattern of
 * `patternProperties`, tested on every key). Counted to the deepest `dados` accepted, with
 * explicit stacks only.
 */
export function perfilDeCusto(esquema: unknown): PerfilDeCusto {
  if (!eNo(esquema)) return { porNivel: new Array<number>(DADOS_PROFUNDIDADE_MAX + 1).fill(1) };
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

  const teto = ORCAMENTO_POR_CORPO + 1;
  const somar = (a: number, b: number) => Math.min(teto, a + b);
  const indice = new Map(ordem.map((no, i) => [no, i]));
  const raiz = indice.get(esquema)!;
  const indices = (nos: No[]) => nos.map((no) => indice.get(no)).filter((i) => i !== undefined);
  // One more node, after the schema's own: `uniqueItems` numbers every item and everything in it,
  // as if it applied a subschema of weight PESO_DO_UNICO to each of them, at every level below.
  const UNICOS = ordem.length;
  const total = ordem.length + 1;
  const noLugar = [...ordem.map((no) => indices(seguintes(no))), []];
  const proprios = [...ordem.map(proprio), PESO_DO_UNICO];
  const deFilhos = ordem.map((no) => {
    const { array, objeto } = filhos(no);
    const unicos = no.uniqueItems === true ? [UNICOS] : [];
    return {
      array: { todos: [...indices(array.todos), ...unicos], umDe: indices(array.umDe), padroes: 0 },
      objeto: { todos: indices(objeto.todos), umDe: indices(objeto.umDe), padroes: tamanho(no.patternProperties) },
    };
  });
  deFilhos.push({
    array: { todos: [UNICOS], umDe: [], padroes: 0 },
    objeto: { todos: [UNICOS], umDe: [], padroes: 0 },
  });
  let excedeu: number | undefined;
  const verificar = (i: number, custo: number) => {
    if (excedeu === undefined && custo > AVALIACOES_POR_VALOR_MAX) excedeu = i;
  };

  // Level 0: the value itself, whatever its type.
  let anterior = new Array<number>(total).fill(0);
  for (let i = 0; i < total; i++) {
    let custo = proprios[i]!;
    for (const outro of noLugar[i]!) custo = somar(custo, anterior[outro]!);
    anterior[i] = custo;
    verificar(i, custo);
  }
  const porNivel = [anterior[raiz]!];
  // Below, the value is an array or an object, and every subschema applied to it in place sees the
  // same one, so the two are counted apart; a child costs the worse of the two.
  for (let k = 1; k <= DADOS_PROFUNDIDADE_MAX; k++) {
    const nivel = new Array<number>(total).fill(0);
    for (const tipo of ['array', 'objeto'] as const) {
      const atual = new Array<number>(total).fill(0);
      for (let i = 0; i < total; i++) {
        const { todos, umDe, padroes } = deFilhos[i]![tipo];
        let custo = Math.min(teto, padroes * PESO_DO_PADRAO);
        for (const outro of noLugar[i]!) custo = somar(custo, atual[outro]!);
        for (const filho of todos) custo = somar(custo, anterior[filho]!);
        let maior = 0;
        for (const filho of umDe) maior = Math.max(maior, anterior[filho]!);
        custo = somar(custo, maior);
        atual[i] = custo;
        verificar(i, custo);
        nivel[i] = Math.max(nivel[i]!, custo);
      }
    }
    porNivel.push(nivel[raiz]!);
    // Deeper levels would repeat this one (a recursion that does not multiply, or nothing left).
    if (nivel.every((custo, i) => custo === anterior[i])) break;
    anterior = nivel;
  }
  while (porNivel.length <= DADOS_PROFUNDIDADE_MAX) porNivel.push(porNivel[porNivel.length - 1]!);
  return {
    excedeu: excedeu === undefined ? undefined : (caminhos(esquema).get(ordem[excedeu]!) ?? '/esquema'),
    porNivel,
  };
}

/** The subschema where checks multiply past AVALIACOES_POR_VALOR_MAX, or undefined. */
export const avaliacoesDemais = (esquema: unknown): string | undefined => perfilDeCusto(esquema).excedeu;

/**
 * The checks one validation may cost at most (~100 ms on the slow end): `dados` whose values,
 * counted level by level and weighted by `porNivel`, could cost more are refused before ajv
 * starts. Ordinary schemas cost a few checks a value, so 1 MB of values of theirs fits.
 */
export const ORCAMENTO_POR_CORPO = 2_500_000;

/** The most checks validating `dados` can cost, from its values per level (see `valoresPorNivel`). */
export function custoDosDados(perfil: PerfilDeCusto, valoresPorNivel: number[]): number {
  let total = 0;
  for (let k = 0; k < valoresPorNivel.length; k++) total += valoresPorNivel[k]! * (perfil.porNivel[k] ?? 0);
  return total;
}

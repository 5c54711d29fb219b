/**
 * Finds recursion that never ends: a `$ref` cycle along which no step descends into the data
 * (`{ "$ref": "#" }`, `{ "anyOf": [{ "$ref": "#" }] }`, two `$defs` referring to each other). ajv
 * compiles such schemas (or overflows compiling them) and then overflows on any data. Recursion
 * through `properties`, `items` and the like is fine: each step takes one level of the data, and the
 * data's depth is bounded (DADOS_PROFUNDIDADE_MAX).
 *
 * Walks with explicit stacks only. Local references are followed: "#", "#/json/pointer", "#anchor",
 * and the `$id`s of embedded resources; anything else cannot be resolved and ajv refuses it anyway.
 */

export type No = Record<string, unknown>;

/** Subschemas applied to the same instance as their parent (one schema, a list, or a map of them). */
const NO_LUGAR = ['not', 'if', 'then', 'else', 'allOf', 'anyOf', 'oneOf'];
const NO_LUGAR_MAPA = ['dependentSchemas', 'dependencies'];
const REFERENCIAS = ['$ref', '$dynamicRef', '$recursiveRef'];
/** Subschemas applied to parts of the instance, or only kept to be referred to ($defs). */
const DESCENDENTES = [
  'items',
  'prefixItems',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const DESCENDENTES_MAPA = ['properties', 'patternProperties', '$defs', 'definitions'];

export const eNo = (valor: unknown): valor is No =>
  typeof valor === 'object' && valor !== null && !Array.isArray(valor);

function subesquemas(no: No, chaves: string[], mapas: string[]): No[] {
  const achados: No[] = [];
  for (const chave of chaves) {
    const valor = no[chave];
    if (Array.isArray(valor)) achados.push(...valor.filter(eNo));
    else if (eNo(valor)) achados.push(valor);
  }
  for (const chave of mapas) {
    const valor = no[chave];
    if (eNo(valor)) achados.push(...Object.values(valor).filter(eNo));
  }
  return achados;
}

export const noLugar = (no: No) => subesquemas(no, NO_LUGAR, NO_LUGAR_MAPA);
const todos = (no: No) => subesquemas(no, [...NO_LUGAR, ...DESCENDENTES], [...NO_LUGAR_MAPA, ...DESCENDENTES_MAPA]);

/** Where each subschema's references resolve: its resource (nearest `$id`), anchors and ids. */
function indexar(raiz: No) {
  const recursoDe = new Map<No, No>();
  const ancoras = new Map<No, Map<string, No>>();
  const ids = new Map<string, No>();
  const pendentes: [No, No][] = [[raiz, raiz]];
  for (let atual = pendentes.pop(); atual; atual = pendentes.pop()) {
    const [no, herdado] = atual;
    const id = no.$id;
    const recurso = typeof id === 'string' && !id.startsWith('#') ? no : herdado;
    if (recurso === no && typeof id === 'string') ids.set(id.replace(/#$/, ''), no);
    recursoDe.set(no, recurso);
    for (const nome of [no.$anchor, no.$dynamicAnchor, typeof id === 'string' && id.startsWith('#') && id.slice(1)]) {
      if (typeof nome === 'string' && nome) {
        const doRecurso = ancoras.get(recurso) ?? new Map<string, No>();
        doRecurso.set(nome, no);
        ancoras.set(recurso, doRecurso);
      }
    }
    for (const filho of todos(no)) pendentes.push([filho, recurso]);
  }
  return { recursoDe, ancoras, ids };
}

function ponteiro(recurso: No, fragmento: string): No | undefined {
  let atual: unknown = recurso;
  for (const parte of fragmento.slice(1).split('/')) {
    let chave: string;
    try {
      chave = decodeURIComponent(parte).replaceAll('~1', '/').replaceAll('~0', '~');
    } catch {
      return undefined;
    }
    if (typeof atual !== 'object' || atual === null || !Object.hasOwn(atual, chave)) return undefined;
    atual = (atual as No)[chave];
  }
  return eNo(atual) ? atual : undefined;
}

/**
 * Every subschema of a schema, and for each the subschemas applied to the same instance as it:
 * its `allOf`/`anyOf`/`not`/… and the targets of its references.
 */
export function grafoNoLugar(raiz: No): { nos: Iterable<No>; seguintes(no: No): No[] } {
  const { recursoDe, ancoras, ids } = indexar(raiz);

  function resolver(ref: string, base: No): No | undefined {
    const cerquilha = ref.indexOf('#');
    const uri = cerquilha < 0 ? ref : ref.slice(0, cerquilha);
    const fragmento = cerquilha < 0 ? '' : ref.slice(cerquilha + 1);
    const recurso = uri === '' ? base : ids.get(uri);
    if (!recurso) return undefined;
    if (fragmento === '') return recurso;
    if (fragmento.startsWith('/')) return ponteiro(recurso, fragmento);
    return ancoras.get(recurso)?.get(fragmento);
  }

  function seguintes(no: No): No[] {
    const base = recursoDe.get(no) ?? raiz;
    const alvos = REFERENCIAS.map((chave) => no[chave])
      .filter((ref): ref is string => typeof ref === 'string')
      .map((ref) => resolver(ref, base))
      .filter((alvo): alvo is No => alvo !== undefined);
    return [...noLugar(no), ...alvos];
  }
  return { nos: recursoDe.keys(), seguintes };
}

/** True when some chain of references can come back to where it started without consuming data. */
export function recursaoSemFim(esquema: unknown): boolean {
  if (!eNo(esquema)) return false;
  const { nos, seguintes } = grafoNoLugar(esquema);
  const conhecidos = new Set(nos);

  // Depth-first over the same-instance edges; meeting a subschema still on the path is a cycle.
  const estado = new Map<No, 'no-caminho' | 'visto'>();
  for (const inicio of conhecidos) {
    if (estado.has(inicio)) continue;
    const caminho: [No, No[]][] = [[inicio, seguintes(inicio)]];
    estado.set(inicio, 'no-caminho');
    while (caminho.length > 0) {
      const [no, restantes] = caminho[caminho.length - 1]!;
      const proximo = restantes.pop();
      if (proximo === undefined) {
        estado.set(no, 'visto');
        caminho.pop();
        continue;
      }
      const visto = estado.get(proximo);
      if (visto === 'no-caminho') return true;
      if (visto === undefined && conhecidos.has(proximo)) {
        estado.set(proximo, 'no-caminho');
        caminho.push([proximo, seguintes(proximo)]);
      }
    }
  }
  return false;
}

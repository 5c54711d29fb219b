import fc from 'fast-check';

type Esq = Record<string, unknown> | boolean;
const eObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Names a document may carry beyond its schema's: the corpus's own names, so collisions come up. */
const EXTRAS = fc.constantFrom('a', 'b', 'c', 'k', 'x1', 'zz');
const qualquer = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<unknown>;

const FORMATOS: Record<string, fc.Arbitrary<string>> = {
  email: fc.emailAddress(),
  date: fc
    .date({ min: new Date('1990-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10)),
  uuid: fc.uuid(),
};

function resolver(raiz: Esq, ref: string): Esq {
  const chaves = ref === '#' ? [] : ref.slice(2).split('/');
  return chaves.reduce<unknown>((s, k) => (eObj(s) ? s[k] : true), raiz) as Esq;
}

/**
 * Documents for a schema, built from its keywords (fast-check arbitraries). Not every document it
 * makes is valid (allOf, not and oneOf are drawn loosely): the property test keeps those ajv accepts
 * under the source schema. Open objects get extra names, from the corpus's names, with any value.
 */
export function documentos(raiz: Esq, s: Esq = raiz, nivel = 0): fc.Arbitrary<unknown> {
  if (s === true || nivel > 5) return qualquer;
  if (s === false) return qualquer;
  if (typeof s.$ref === 'string') return documentos(raiz, resolver(raiz, s.$ref), nivel + 1);
  if (Object.hasOwn(s, 'const')) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  for (const chave of ['anyOf', 'oneOf'] as const) {
    const ramos = s[chave];
    if (Array.isArray(ramos)) {
      const { [chave]: _, ...resto } = s;
      return fc.oneof(...ramos.map((r) => documentos(raiz, { ...resto, ...(r as object) }, nivel + 1)));
    }
  }
  if (Array.isArray(s.allOf)) {
    const { allOf, ...resto } = s;
    const juntos = Object.assign({}, resto, ...(allOf as object[]));
    return documentos(raiz, juntos, nivel + 1);
  }
  if (s.not !== undefined && s.type === undefined) return qualquer;
  const tipos =
    s.type === undefined ? ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'] : [s.type].flat();
  return fc.oneof(...(tipos as string[]).map((t) => porTipo(raiz, s, t, nivel)));
}

function porTipo(raiz: Esq, s: Record<string, unknown>, tipo: string, nivel: number): fc.Arbitrary<unknown> {
  switch (tipo) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number':
      return numero(s, tipo === 'integer');
    case 'string':
      return texto(s);
    case 'array':
      return lista(raiz, s, nivel);
    default:
      return objeto(raiz, s, nivel);
  }
}

function numero(s: Record<string, unknown>, inteiro: boolean): fc.Arbitrary<number> {
  const n = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : undefined);
  const min = Math.max(n('minimum') ?? -20, (n('exclusiveMinimum') ?? -21) + 0.001);
  const max = Math.min(n('maximum') ?? 20, (n('exclusiveMaximum') ?? 21) - 0.001);
  const m = n('multipleOf');
  if (m !== undefined) return fc.integer({ min: -40, max: 40 }).map((k) => k * m);
  const limites = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'].map(n).filter((v) => v !== undefined);
  const bordas = fc.constantFrom(Math.ceil(min), Math.floor(max), 0, 1, 2.5, 3, 4, -1e21, 1e21, ...limites);
  if (inteiro)
    return fc.oneof(fc.integer({ min: Math.ceil(min), max: Math.max(Math.ceil(min), Math.floor(max)) }), bordas);
  return fc.oneof(fc.double({ min, max: Math.max(min, max), noNaN: true, noDefaultInfinity: true }), bordas);
}

function texto(s: Record<string, unknown>): fc.Arbitrary<string> {
  if (typeof s.format === 'string' && FORMATOS[s.format]) return FORMATOS[s.format]!;
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern));
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  const maxLength = typeof s.maxLength === 'number' ? s.maxLength : 8;
  return fc.oneof(
    fc.string({ minLength, maxLength: Math.max(minLength, maxLength) }),
    fc.constantFrom('a', 'ab', 'b', ''),
  );
}

function lista(raiz: Esq, s: Record<string, unknown>, nivel: number): fc.Arbitrary<unknown[]> {
  const prefixo = Array.isArray(s.prefixItems) ? (s.prefixItems as Esq[]) : [];
  const resto = s.items === undefined ? true : (s.items as Esq);
  const min = typeof s.minItems === 'number' ? s.minItems : 0;
  const max = Math.min(typeof s.maxItems === 'number' ? s.maxItems : 4, resto === false ? prefixo.length : 4);
  return fc
    .integer({ min: Math.min(min, max), max: Math.max(min, max) })
    .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => documentos(raiz, prefixo[i] ?? resto, nivel + 1))));
}

function objeto(raiz: Esq, s: Record<string, unknown>, nivel: number): fc.Arbitrary<Record<string, unknown>> {
  const props = eObj(s.properties) ? (s.properties as Record<string, Esq>) : {};
  const exigidas = Array.isArray(s.required) ? (s.required as string[]) : [];
  const adicional = s.additionalProperties === undefined ? true : (s.additionalProperties as Esq);
  const padroes = eObj(s.patternProperties) ? Object.entries(s.patternProperties as Record<string, Esq>) : [];
  const conhecidas = fc.record(
    Object.fromEntries(Object.entries(props).map(([k, v]) => [k, documentos(raiz, v, nivel + 1)])),
    { requiredKeys: exigidas.filter((k) => k in props) },
  );
  const extras =
    adicional === false
      ? fc.constant({})
      : fc.dictionary(EXTRAS, adicional === true ? qualquer : documentos(raiz, adicional, nivel + 1), { maxKeys: 2 });
  const dosPadroes = padroes.map(([p, v]) =>
    fc.dictionary(fc.stringMatching(new RegExp(p)), documentos(raiz, v, nivel + 1), { maxKeys: 1 }),
  );
  return fc.tuple(extras, ...dosPadroes, conhecidas).map((partes) => Object.assign({}, ...partes));
}

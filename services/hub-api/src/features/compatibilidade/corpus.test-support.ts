import fc from 'fast-check';

/**
 * Pairs of schemas (N-1, N) for the property test: each family draws both sides from the same small
 * space, so that both compatible and breaking pairs come up for every rule the checker reads.
 */
export type Esq = Record<string, unknown>;
export interface Par {
  familia: string;
  anterior: Esq;
  nova: Esq;
}

const NOMES = ['a', 'b', 'c', 'k'];
const opcional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
const limpo = (o: Record<string, unknown>): Esq =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const tipos = fc
  .subarray(['integer', 'number', 'string', 'null', 'boolean'], { minLength: 1 })
  .map((t) => ({ type: t.length === 1 ? t[0] : t }));

const limite = fc.constantFrom(0, 2.5, 3);
const numeros = fc
  .record({
    type: fc.constantFrom('integer', 'number'),
    minimum: opcional(limite),
    maximum: opcional(limite),
    exclusiveMinimum: opcional(limite),
    exclusiveMaximum: opcional(limite),
    multipleOf: opcional(fc.constantFrom(1, 2, 0.5, 3)),
  })
  .map(limpo);

/** One lower and one upper bound, each inclusive, exclusive or absent, on two values: the edges meet often. */
const limites = fc
  .record({
    type: fc.constantFrom('integer', 'number'),
    baixo: fc.constantFrom(undefined, 'minimum', 'exclusiveMinimum'),
    alto: fc.constantFrom(undefined, 'maximum', 'exclusiveMaximum'),
    min: fc.constantFrom(0, 3),
    max: fc.constantFrom(5, 5.5),
  })
  .map(({ type, baixo, alto, min, max }) =>
    limpo({ type, ...(baixo ? { [baixo]: min } : {}), ...(alto ? { [alto]: max } : {}) }),
  );

const textos = fc
  .record({
    type: fc.constant('string'),
    minLength: opcional(fc.constantFrom(0, 1, 3)),
    maxLength: opcional(fc.constantFrom(2, 5, 40)),
    pattern: opcional(fc.constantFrom('^a', '^[ab]+$', '^b')),
    format: opcional(fc.constantFrom('email', 'date', 'uuid')),
  })
  .map(limpo);

const VALORES = [1, 2, 2.5, 'a', 'b', null, true, false];
const enums = fc.oneof(
  fc.subarray(VALORES, { minLength: 1 }).map((e) => ({ enum: e })),
  fc.constantFrom(...VALORES).map((c) => ({ const: c })),
  fc.constant({ type: 'boolean' }),
);

const simples: fc.Arbitrary<Esq> = fc.oneof(tipos, numeros, textos, enums);

const objetos = fc
  .record({
    props: fc.subarray(NOMES),
    esquemas: fc.array(simples, { minLength: 4, maxLength: 4 }),
    obrigatorias: fc.subarray(NOMES),
    adicional: fc.constantFrom<unknown>(undefined, true, false, { type: 'string' }),
    padroes: opcional(fc.constant({ '^x': { type: 'integer' } })),
    minProperties: opcional(fc.constantFrom(0, 1, 2)),
    maxProperties: opcional(fc.constantFrom(1, 3)),
  })
  .map(({ props, esquemas, obrigatorias, adicional, padroes, ...contagens }) =>
    limpo({
      type: 'object',
      properties: Object.fromEntries(props.map((p, i) => [p, esquemas[i]])),
      // ajv strict wants every required name among the properties.
      required: obrigatorias.filter((r) => props.includes(r)),
      additionalProperties: adicional,
      patternProperties: padroes,
      ...contagens,
    }),
  );

const listas = fc.oneof(
  fc
    .record({
      type: fc.constant('array'),
      items: opcional(simples),
      minItems: opcional(fc.constantFrom(0, 1, 2)),
      maxItems: opcional(fc.constantFrom(2, 4)),
      uniqueItems: opcional(fc.boolean()),
    })
    .map(limpo),
  fc
    .array(simples, { minLength: 1, maxLength: 2 })
    .map((prefixItems) => ({ type: 'array', prefixItems, minItems: prefixItems.length, items: false })),
);

const referencias = fc.oneof(
  simples.map((d) => ({ $defs: { d }, $ref: '#/$defs/d' })),
  simples.map((v) => ({
    $defs: { n: { type: 'object', properties: { v, c: { type: 'array', items: { $ref: '#/$defs/n' } } } } },
    $ref: '#/$defs/n',
  })),
);

const combinadores = fc.oneof(
  fc.tuple(simples, simples).map(([x, y]) => ({ allOf: [x, y] })),
  fc.tuple(simples, simples).map(([x, y]) => ({ anyOf: [x, y] })),
  fc.subarray(['p', 'q', 'r'], { minLength: 1 }).map((ks) => ({
    type: 'object',
    oneOf: ks.map((k) => ({ properties: { k: { const: k } }, required: ['k'] })),
  })),
  fc.constantFrom('string', 'integer', 'null').map((t) => ({ not: { type: t } })),
);

const aninhados = fc.tuple(fc.oneof(simples, listas), fc.boolean()).map(([a, obrigatoria]) => ({
  type: 'object',
  properties: { a },
  ...(obrigatoria ? { required: ['a'] } : {}),
}));

const FAMILIAS: Record<string, fc.Arbitrary<Esq>> = {
  tipos,
  numeros,
  limites,
  textos,
  enums,
  objetos,
  listas,
  referencias,
  combinadores,
  aninhados,
};

/** A pair from one family: both sides drawn from it, or N equal to N-1 (a tenth of the time). */
export const par: fc.Arbitrary<Par> = fc
  .constantFrom(...Object.keys(FAMILIAS))
  .chain((familia) =>
    fc
      .tuple(FAMILIAS[familia]!, FAMILIAS[familia]!, fc.integer({ min: 0, max: 9 }))
      .map(([anterior, nova, igual]) => ({ familia, anterior, nova: igual === 0 ? anterior : nova })),
  );

export const FAMILIAS_DO_CORPUS = Object.keys(FAMILIAS);

import { type Compatibilidade, verificarCompatibilidade } from './compatibilidade';

type E = Record<string, unknown>;
const obj = (properties: E, extra: E = {}) => ({ type: 'object', properties, ...extra });
const str = { type: 'string' };
const int = { type: 'integer' };
/** `if`/`then` as JSON text: an object literal with a `then` key reads as a thenable to the linter. */
const SE_ENTAO = JSON.parse('{"type":"string","if":{"maxLength":2},"then":{"pattern":"^a"}}') as E;

/** [what, N-1, N, rule, compatible, a finding expected (caminho, mensagem) when not]. */
const CASOS: [string, E, E, Compatibilidade, boolean, { caminho: string; mensagem: RegExp }?][] = [
  ['integer widened to number is backward', int, { type: 'number' }, 'backward', true],
  [
    'integer widened to number is not forward',
    int,
    { type: 'number' },
    'forward',
    false,
    { caminho: '/type', mensagem: /type widened: integer to number/ },
  ],
  [
    'number narrowed to integer',
    { type: 'number' },
    int,
    'backward',
    false,
    { caminho: '/type', mensagem: /type narrowed: number to integer/ },
  ],
  ['a type added to a union', str, { type: ['string', 'null'] }, 'backward', true],
  [
    'a type removed from a union',
    { type: ['string', 'null'] },
    str,
    'backward',
    false,
    { caminho: '/type', mensagem: /type narrowed: null/ },
  ],
  [
    'required property added',
    obj({ a: str }),
    obj({ a: str }, { required: ['a'] }),
    'backward',
    false,
    { caminho: '/required', mensagem: /required property added: a/ },
  ],
  [
    'required property removed',
    obj({ a: str }, { required: ['a'] }),
    obj({ a: str }),
    'forward',
    false,
    { caminho: '/required', mensagem: /required property removed: a/ },
  ],
  [
    'typed optional property added to an open object',
    obj({ a: str }),
    obj({ a: str, b: int }),
    'backward',
    false,
    { caminho: '/properties/b', mensagem: /property added: b \(the old object is open/ },
  ],
  [
    'optional property added to a closed object',
    obj({ a: str }, { additionalProperties: false }),
    obj({ a: str, b: int }, { additionalProperties: false }),
    'backward',
    true,
  ],
  [
    'property removed from a closed object',
    obj({ a: str, b: int }, { additionalProperties: false }),
    obj({ a: str }, { additionalProperties: false }),
    'backward',
    false,
    { caminho: '/additionalProperties', mensagem: /property removed: b \(additionalProperties is false\)/ },
  ],
  [
    'additionalProperties true kept open',
    obj({ a: str }, { additionalProperties: true }),
    obj({ a: str }),
    'full',
    true,
  ],
  [
    'additionalProperties closed',
    obj({ a: str }),
    obj({ a: str }, { additionalProperties: false }),
    'backward',
    false,
    { caminho: '/additionalProperties', mensagem: /additionalProperties added/ },
  ],
  [
    'additionalProperties schema widened',
    obj({}, { additionalProperties: int }),
    obj({}, { additionalProperties: { type: 'number' } }),
    'backward',
    true,
  ],
  [
    'additionalProperties schema narrowed',
    obj({}, { additionalProperties: str }),
    obj({}, { additionalProperties: int }),
    'backward',
    false,
    { caminho: '/additionalProperties/type', mensagem: /type narrowed/ },
  ],
  ['enum value added', { enum: ['a'] }, { enum: ['a', 'b'] }, 'backward', true],
  [
    'enum value removed',
    { enum: ['a', 'b'] },
    { enum: ['a'] },
    'backward',
    false,
    { caminho: '/enum', mensagem: /enum value removed: "b"/ },
  ],
  [
    'enum value added is not forward',
    { enum: ['a'] },
    { enum: ['a', 'b'] },
    'forward',
    false,
    { caminho: '', mensagem: /enum value added: "b"/ },
  ],
  [
    'const changed',
    { const: 1 },
    { const: 2 },
    'backward',
    false,
    { caminho: '/enum', mensagem: /enum value removed: 1/ },
  ],
  ['const within the new type', { const: 3 }, { type: 'integer', minimum: 0 }, 'backward', true],
  [
    'maximum lowered',
    { type: 'number', maximum: 10 },
    { type: 'number', maximum: 5 },
    'backward',
    false,
    { caminho: '/maximum', mensagem: /maximum lowered/ },
  ],
  ['maximum raised', { type: 'number', maximum: 5 }, { type: 'number', maximum: 10 }, 'backward', true],
  [
    'minimum raised',
    { type: 'number', minimum: 0 },
    { type: 'number', minimum: 1 },
    'backward',
    false,
    { caminho: '/minimum', mensagem: /minimum raised/ },
  ],
  [
    'maximum made exclusive at the same value',
    { type: 'number', maximum: 5 },
    { type: 'number', exclusiveMaximum: 5 },
    'backward',
    false,
    { caminho: '/exclusiveMaximum', mensagem: /maximum lowered/ },
  ],
  [
    'exclusive and inclusive meet on integers',
    { type: 'integer', exclusiveMinimum: 0 },
    { type: 'integer', minimum: 1 },
    'full',
    true,
  ],
  [
    'minimum added',
    { type: 'number' },
    { type: 'number', minimum: 0 },
    'backward',
    false,
    { caminho: '/minimum', mensagem: /minimum added/ },
  ],
  [
    'multipleOf added',
    int,
    { type: 'integer', multipleOf: 2 },
    'backward',
    false,
    { caminho: '/multipleOf', mensagem: /multipleOf added/ },
  ],
  ['multipleOf unchanged', { type: 'integer', multipleOf: 2 }, { type: 'integer', multipleOf: 2 }, 'full', true],
  [
    'maxLength lowered',
    { type: 'string', maxLength: 10 },
    { type: 'string', maxLength: 5 },
    'backward',
    false,
    { caminho: '/maxLength', mensagem: /maxLength lowered/ },
  ],
  ['minLength lowered', { type: 'string', minLength: 3 }, { type: 'string', minLength: 1 }, 'backward', true],
  [
    'pattern added',
    str,
    { type: 'string', pattern: '^a' },
    'backward',
    false,
    { caminho: '/pattern', mensagem: /pattern added/ },
  ],
  ['pattern removed', { type: 'string', pattern: '^a' }, str, 'backward', true],
  [
    'two different patterns are refused, not guessed',
    { type: 'string', pattern: '^ab' },
    { type: 'string', pattern: '^a' },
    'backward',
    false,
    { caminho: '/pattern', mensagem: /cannot decide.*two different patterns/ },
  ],
  [
    'an enum checked against a new pattern',
    { enum: ['ab', 'ac'] },
    { type: 'string', pattern: '^a' },
    'backward',
    true,
  ],
  [
    'format added',
    str,
    { type: 'string', format: 'email' },
    'backward',
    false,
    { caminho: '/format', mensagem: /format added: email/ },
  ],
  [
    'items narrowed',
    { type: 'array', items: { type: 'number' } },
    { type: 'array', items: int },
    'backward',
    false,
    { caminho: '/items/type', mensagem: /type narrowed: number to integer/ },
  ],
  [
    'prefixItems against items',
    { type: 'array', prefixItems: [int], minItems: 1, items: false },
    { type: 'array', items: { type: 'number' } },
    'backward',
    true,
  ],
  [
    'maxItems lowered',
    { type: 'array', maxItems: 4 },
    { type: 'array', maxItems: 2 },
    'backward',
    false,
    { caminho: '/maxItems', mensagem: /maxItems lowered/ },
  ],
  [
    'minItems raised',
    { type: 'array' },
    { type: 'array', minItems: 1 },
    'backward',
    false,
    { caminho: '/minItems', mensagem: /minItems raised/ },
  ],
  [
    'uniqueItems added',
    { type: 'array' },
    { type: 'array', uniqueItems: true },
    'backward',
    false,
    { caminho: '/uniqueItems', mensagem: /uniqueItems added/ },
  ],
  ['uniqueItems removed', { type: 'array', uniqueItems: true }, { type: 'array' }, 'backward', true],
  [
    '$ref to a widened definition',
    { $defs: { n: int }, $ref: '#/$defs/n' },
    { $defs: { n: { type: 'number' } }, $ref: '#/$defs/n' },
    'backward',
    true,
  ],
  [
    'a recursive schema unchanged',
    { $defs: { n: obj({ c: { type: 'array', items: { $ref: '#/$defs/n' } } }) }, $ref: '#/$defs/n' },
    { $defs: { n: obj({ c: { type: 'array', items: { $ref: '#/$defs/n' } } }) }, $ref: '#/$defs/n' },
    'full',
    true,
  ],
  [
    'a recursive schema narrowed deep down',
    {
      $defs: { n: obj({ v: { type: 'number' }, c: { type: 'array', items: { $ref: '#/$defs/n' } } }) },
      $ref: '#/$defs/n',
    },
    { $defs: { n: obj({ v: int, c: { type: 'array', items: { $ref: '#/$defs/n' } } }) }, $ref: '#/$defs/n' },
    'backward',
    false,
    { caminho: '/$defs/n/properties/v/type', mensagem: /number to integer/ },
  ],
  [
    // ajv resolves "#/$defs/x" against the nearest $id (the inner resource: integer), not the root.
    'a $ref under a nested $id is not taken as the root definition it names',
    obj({ p: obj({ q: str }) }),
    {
      ...obj({ p: { ...obj({ q: { $ref: '#/$defs/x' } }), $id: 'https://e.example/p', $defs: { x: int } } }),
      $defs: { x: str },
    },
    'backward',
    false,
    { caminho: '/properties/p/properties/q', mensagem: /cannot decide.*declares \$id/ },
  ],
  [
    'a nested $id makes an old side $ref unreadable, so it is widened, never trusted',
    {
      ...obj({ p: { ...obj({ q: { $ref: '#/$defs/x' } }), $id: 'https://e.example/p', $defs: { x: int } } }),
      $defs: { x: str },
    },
    obj({ p: obj({ q: str }) }),
    'backward',
    false,
  ],
  [
    'a number format added (int32 bounds the integers)',
    int,
    { ...int, format: 'int32' },
    'backward',
    false,
    { caminho: '/format', mensagem: /format added: int32/ },
  ],
  ['a number format kept', { ...int, format: 'int32' }, { ...int, format: 'int32', minimum: -5 }, 'forward', true],
  ['an enum of int32 values under a new int32 format', { enum: [1, 2] }, { ...int, format: 'int32' }, 'backward', true],
  [
    'allOf in the new side',
    obj({ a: str }, { required: ['a'] }),
    { allOf: [obj({ a: str }), { required: ['a'] }] },
    'full',
    true,
  ],
  ['anyOf gains a branch', { anyOf: [str, int] }, { anyOf: [str, int, { type: 'null' }] }, 'backward', true],
  [
    'anyOf loses a branch',
    { anyOf: [str, int] },
    { anyOf: [str] },
    'backward',
    false,
    { caminho: '/anyOf/0/type', mensagem: /type narrowed: integer/ },
  ],
  ['a union type split into anyOf', { type: ['string', 'integer'] }, { anyOf: [str, int] }, 'full', true],
  [
    'oneOf with a discriminator',
    obj({ k: { const: 'a' } }, { required: ['k'] }),
    { oneOf: [obj({ k: { const: 'a' } }, { required: ['k'] }), obj({ k: { const: 'b' } }, { required: ['k'] })] },
    'backward',
    true,
  ],
  [
    'oneOf whose branches overlap is refused',
    str,
    { oneOf: [str, { type: 'string', maxLength: 3 }] },
    'backward',
    false,
    { caminho: '/oneOf', mensagem: /cannot decide.*more than one branch/ },
  ],
  ['not of a disjoint type', str, { not: int }, 'backward', true],
  [
    'not added over the same type',
    { type: 'number' },
    { not: int },
    'backward',
    false,
    { caminho: '/not', mensagem: /not added/ },
  ],
  [
    'a keyword the checker does not read is refused',
    str,
    SE_ENTAO,
    'backward',
    false,
    { caminho: '/if', mensagem: /cannot decide.*keyword if/ },
  ],
  [
    'draft-07 tuples',
    { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [int], additionalItems: false },
    { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'number' }] },
    'backward',
    true,
  ],
  ['none checks nothing', obj({ a: str }), int, 'none', true],
];

describe('the compatibility checker, rule by rule', () => {
  const casos = CASOS.map(([nome, anterior, nova, regra, compativel, achado]) => ({
    nome,
    anterior,
    nova,
    regra,
    compativel,
    achado,
  }));
  test.each(casos)('$nome', ({ anterior, nova, regra, compativel, achado }) => {
    const resultado = verificarCompatibilidade(anterior, nova, regra);
    expect(resultado.compativel).toBe(compativel);
    if (compativel) expect(resultado.erros).toEqual([]);
    if (achado) {
      expect(resultado.erros).toContainEqual({
        caminho: achado.caminho,
        mensagem: expect.stringMatching(achado.mensagem),
      });
    }
  });

  test('When full is asked, then both directions are checked and a finding is not repeated', () => {
    const { erros } = verificarCompatibilidade({ enum: ['a', 'b'] }, { enum: ['a', 'c'] }, 'full');
    expect(erros.map((e) => e.mensagem).sort()).toEqual(['enum value added: "c"', 'enum value removed: "b"']);
  });

  test('When a schema is too large to compare, then it is refused, not called compatible', () => {
    const largo = (n: number) => ({
      anyOf: Array.from({ length: n }, (_, i) => ({ anyOf: [{ const: i }, { const: -i }] })),
    });
    const resultado = verificarCompatibilidade(
      { allOf: Array.from({ length: 12 }, () => largo(12)) },
      largo(200),
      'backward',
    );
    expect(resultado.compativel).toBe(false);
  });
});

import { profundidade } from './limites';
import { recursaoSemFim } from './recursao';

describe('recursaoSemFim', () => {
  it.each([
    ['a reference to the root', { $ref: '#' }],
    ['a reference to the root through anyOf', { anyOf: [{ type: 'string' }, { $ref: '#' }] }],
    ['two $defs referring to each other', { $defs: { a: { $ref: '#/$defs/b' }, b: { not: { $ref: '#/$defs/a' } } } }],
    ['an anchor referring to itself', { $defs: { a: { $anchor: 'laco', allOf: [{ $ref: '#laco' }] } } }],
    [
      'an embedded resource referring to itself',
      { $defs: { r: { $id: 'https://x.test/r', if: { $ref: 'https://x.test/r' } } } },
    ],
  ])('When the schema has %s, then it is endless recursion', (_nome, esquema) => {
    expect(recursaoSemFim(esquema)).toBe(true);
  });

  it.each([
    ['a tree through items', { type: 'array', items: { $ref: '#' } }],
    [
      'a tree through properties of a $defs node',
      { $defs: { no: { properties: { filho: { $ref: '#/$defs/no' } } } }, $ref: '#/$defs/no' },
    ],
    [
      'a chain without a cycle',
      { $defs: { a: { $ref: '#/$defs/b' }, b: { type: 'string' } }, allOf: [{ $ref: '#/$defs/a' }] },
    ],
    ['a $ref-looking value inside const', { const: { $ref: '#/const' } }],
    ['a reference that does not resolve', { $ref: '#/$defs/nada' }],
  ])('When the schema has %s, then it is not', (_nome, esquema) => {
    expect(recursaoSemFim(esquema)).toBe(false);
  });
});

describe('profundidade', () => {
  it('When a value is nested 100,000 levels, then it is measured without overflowing, stopping past the limit', () => {
    let fundo: unknown = 1;
    for (let i = 0; i < 100_000; i++) fundo = [fundo];
    expect(profundidade(fundo)).toBe(100_000);
    expect(profundidade(fundo, 64)).toBe(65);
    expect([profundidade('x'), profundidade({}), profundidade({ a: [1, { b: null }] })]).toEqual([0, 1, 3]);
  });
});

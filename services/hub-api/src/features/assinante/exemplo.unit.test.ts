import { Ajv2020 } from 'ajv/dist/2020';
import { exemploDe } from './exemplo';

const ajv = new Ajv2020({ strict: false, validateFormats: false });

describe('exemploDe: an example document for a schema', () => {
  test('When the schema has examples, default, const or enum, then the first of them, in that order', () => {
    expect(exemploDe({ type: 'string', examples: ['x'], default: 'y' })).toBe('x');
    expect(exemploDe({ type: 'string', default: 'y', enum: ['z'] })).toBe('y');
    expect(exemploDe({ const: 7 })).toBe(7);
    expect(exemploDe({ type: 'string', enum: ['pago', 'cancelado'] })).toBe('pago');
  });

  test('When an order schema with bounds, formats, nested objects and arrays is given, then the example is valid against it', () => {
    const esquema = {
      type: 'object',
      required: ['pedido_id', 'cliente', 'itens', 'total_centavos', 'criado_em'],
      properties: {
        pedido_id: { type: 'string', minLength: 10, maxLength: 20 },
        cliente: {
          type: 'object',
          required: ['email'],
          properties: { email: { type: 'string', format: 'email' }, nome: { type: 'string' } },
          additionalProperties: false,
        },
        itens: {
          type: 'array',
          minItems: 2,
          items: {
            type: 'object',
            required: ['quantidade'],
            properties: { quantidade: { type: 'integer', minimum: 1 } },
          },
        },
        total_centavos: { type: 'integer', exclusiveMinimum: 0 },
        desconto: { type: ['number', 'null'], maximum: 0.5 },
        criado_em: { type: 'string', format: 'date-time' },
      },
      additionalProperties: false,
    };
    const exemplo = exemploDe(esquema) as Record<string, unknown>;
    expect(Object.keys(exemplo).sort()).toEqual(['cliente', 'criado_em', 'itens', 'pedido_id', 'total_centavos']);
    expect((exemplo.itens as unknown[]).length).toBe(2);
    expect(ajv.validate(esquema, exemplo)).toBe(true);
  });

  test('When the schema has no required list, a union or nothing known, then every property, the first option, or null', () => {
    expect(exemploDe({ properties: { a: { type: 'boolean' }, b: { type: 'number' } } })).toEqual({ a: true, b: 1 });
    expect(exemploDe({ oneOf: [{ type: 'integer', minimum: 3 }, { type: 'string' }] })).toBe(3);
    expect(exemploDe({})).toBeNull();
    expect(exemploDe(true)).toBeNull();
  });

  test('When a schema nests deeper than the limit, then the example stops there with null', () => {
    let esquema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) esquema = { type: 'object', required: ['a'], properties: { a: esquema } };
    expect(JSON.stringify(exemploDe(esquema))).toContain('null');
  });
});

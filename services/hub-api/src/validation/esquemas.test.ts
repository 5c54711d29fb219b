import { readFileSync } from 'node:fs';
import { HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import path from 'node:path';
import { Compilador } from './compilacao';
import { ValidadorDeEsquemas } from './esquemas';

/** One pool of compilation workers for the file's validators (each validator its own cache). */
const compilador = new Compilador({ limiteMs: 60_000 });
const novo = () => new ValidadorDeEsquemas({ compilador });
afterAll(() => compilador.encerrar());

const pessoa = {
  type: 'object',
  required: ['nome', 'idade'],
  properties: {
    nome: { type: 'string', minLength: 1 },
    idade: { type: 'integer', minimum: 0 },
    email: { type: 'string', format: 'email' },
  },
  additionalProperties: false,
};

async function registrar(validador: ValidadorDeEsquemas, id: string, esquema: unknown) {
  const { erros, validador: compilado } = await validador.verificarEsquema(esquema);
  expect(erros).toEqual([]);
  validador.lembrar(id, compilado!);
  return { id, esquema };
}

describe('ValidadorDeEsquemas', () => {
  it('When a 2020-12 schema (the default) is registered and used many times, then it is compiled once', async () => {
    const validador = novo();
    const versao = await registrar(validador, 'v1', pessoa);
    for (let i = 0; i < 5; i++)
      expect(await validador.validarDados(versao, { nome: 'Ana', idade: i })).toEqual({ valido: true, erros: [] });
    expect(validador.compilacoes).toBe(1);
  });

  it('When a version is not cached yet (another process created it), then it is compiled on first use only (its every-error variant on the first invalid body)', async () => {
    const validador = novo();
    const versao = { id: 'v2', esquema: pessoa };
    expect((await validador.validarDados(versao, { nome: 'Ana', idade: 1 })).valido).toBe(true);
    expect(validador.compilacoes).toBe(1);
    for (let i = 0; i < 3; i++) expect((await validador.validarDados(versao, { nome: 'Ana' })).valido).toBe(false);
    expect((await validador.validarDados(versao, { nome: 'Ana', idade: 2 })).valido).toBe(true);
    expect(validador.compilacoes).toBe(2);
  });

  it('When dados break the schema, then every error is listed with a pointer into the body', async () => {
    const validador = novo();
    const versao = await registrar(validador, 'v3', pessoa);
    const resultado = await validador.validarDados(versao, { idade: -1, email: 'x', extra: true });
    expect(resultado.valido).toBe(false);
    expect(resultado.erros).toEqual(
      expect.arrayContaining([
        { caminho: '/dados/nome', mensagem: 'is required' },
        { caminho: '/dados/extra', mensagem: 'is not an allowed property' },
        { caminho: '/dados/idade', mensagem: 'must be >= 0' },
        { caminho: '/dados/email', mensagem: 'must match format "email"' },
      ]),
    );
  });

  it('When dados break the schema in more than 50 places, then 50 errors are reported', async () => {
    const validador = novo();
    const versao = await registrar(validador, 'v4', { type: 'array', items: { type: 'integer' } });
    const resultado = await validador.validarDados(
      versao,
      Array.from({ length: 80 }, () => 'x'),
    );
    expect(resultado.erros).toHaveLength(50);
    expect(resultado.erros[49]).toEqual({ caminho: '/dados/49', mensagem: 'must be integer' });
  });

  it('When a subschema has 3,000 properties (too wide for the code that stops at the first error), then it is registered and validates 20,000 items', async () => {
    const validador = novo();
    const properties = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`p${i}`, { type: 'string' }]));
    const versao = await registrar(validador, 'largo', { type: 'array', items: { type: 'object', properties } });
    const itens: Record<string, unknown>[] = Array.from({ length: 20_000 }, (_, i) => ({ [`p${i % 3_000}`]: 'x' }));
    expect(await validador.validarDados(versao, itens.slice(0, 10))).toEqual({ valido: true, erros: [] });
    itens[7] = { p2999: 1 };
    expect(await validador.validarDados(versao, itens.slice(0, 10))).toEqual({
      valido: false,
      erros: [{ caminho: '/dados/7/p2999', mensagem: 'must be string' }],
    });
    // 20,000 objects of 3,000 properties each, checked by code V8 runs interpreted: over the budget.
    expect((await validador.validarDados(versao, itens)).erros).toEqual([
      { caminho: '/dados', mensagem: expect.stringContaining('has too many values for this schema') },
    ]);
  });

  it('When a draft-07 schema is registered, then the draft-07 ajv checks it (2020-12 keywords are unknown there)', async () => {
    const validador = novo();
    const draft07 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'array',
      items: [{ type: 'string' }],
      additionalItems: false,
      minItems: 1,
    };
    const versao = await registrar(validador, 'v5', draft07);
    expect((await validador.validarDados(versao, ['a'])).valido).toBe(true);
    expect((await validador.validarDados(versao, ['a', 'b'])).valido).toBe(false);
    const mixed = await validador.verificarEsquema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'array',
      prefixItems: [{ type: 'string' }],
    });
    expect(mixed.erros[0]!.mensagem).toMatch(/unknown keyword: "prefixItems"/);
  });

  it.each([
    [{ type: 'strng' }, '/esquema/type'],
    [{ type: 'object', properties: { a: { type: 'string' } }, requird: ['a'] }, '/esquema'],
    [{ type: 'object', required: ['a'] }, '/esquema'],
    [{ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }, '/esquema/$schema'],
    [{ $ref: 'https://example.com/remote.json' }, '/esquema'],
    [{ type: 'string', format: 'not-a-format' }, '/esquema'],
    [{ $async: true, type: 'object' }, '/esquema/$async'],
    [[], '/esquema'],
    [true, '/esquema'],
  ])('When the schema %j is registered, then it is refused at %s', async (esquema, caminho) => {
    const { erros, validador } = await novo().verificarEsquema(esquema);
    expect(validador).toBeUndefined();
    expect(erros.length).toBeGreaterThan(0);
    expect(erros[0]!.caminho.startsWith(caminho)).toBe(true);
  });

  it('When a pattern would backtrack catastrophically, then it runs on RE2 and answers at once', async () => {
    const validador = novo();
    const versao = await registrar(validador, 'redos', { type: 'string', pattern: '^(a+)+$' });
    // 60 characters: the backtracking engine would need ~2^60 steps here.
    expect(await validador.validarDados(versao, `${'a'.repeat(60)}!`)).toMatchObject({ valido: false });
    expect((await validador.validarDados(versao, 'a'.repeat(60))).valido).toBe(true);
  });

  it('When a pattern needs a backtracking feature (lookahead, backreference), then the schema is refused', async () => {
    const validador = novo();
    for (const pattern of ['^(?=a)a$', '^(a)\\1$']) {
      const { erros } = await validador.verificarEsquema({ type: 'string', pattern });
      expect(erros).toHaveLength(1);
      expect(erros[0]!.caminho).toBe('/esquema');
    }
  });

  it('When two versions share the same $id, then both compile (nothing is left behind in ajv)', async () => {
    const validador = novo();
    const a = await registrar(validador, 'a', { $id: 'https://hub.example/pedido', type: 'object' });
    const b = await registrar(validador, 'b', { $id: 'https://hub.example/pedido', type: 'string' });
    expect((await validador.validarDados(a, {})).valido).toBe(true);
    expect((await validador.validarDados(b, {})).valido).toBe(false);
  });

  it('When the seeded colaborador.atualizado v1 schema is checked, then it compiles strictly and describes a collaborator', async () => {
    const sql = readFileSync(path.join(HUB_DATA_MIGRATIONS_DIR, '002.do.plataforma.sql'), 'utf8');
    const literal = /1,\n {2}'(\{[\s\S]*?\n\})',/.exec(sql)![1]!.replaceAll("''", "'");
    const validador = novo();
    const versao = await registrar(validador, 'colaborador', JSON.parse(literal));
    const colaborador = {
      termoauth_id: 't1',
      email: 'ana@empresa.com.br',
      nome: 'Ana',
      ativo: true,
      funcao: { id: 'f1', nome: 'Analista' },
    };
    expect((await validador.validarDados(versao, colaborador)).valido).toBe(true);
    expect((await validador.validarDados(versao, { ...colaborador, funcao: null })).valido).toBe(true);
    expect((await validador.validarDados(versao, { ...colaborador, funcao: { id: 'f1' } })).erros).toEqual([
      { caminho: '/dados/funcao/nome', mensagem: 'is required' },
    ]);
  });

  it('When dados deeper than 64 levels are checked as publication checks them, then valido false, never a thrown overflow', async () => {
    const validador = novo();
    const versao = await registrar(validador, 'arvore', { type: 'array', items: { $ref: '#' } });
    let dados: unknown = [];
    for (let i = 1; i < 64; i++) dados = [dados];
    expect(await validador.validarDados(versao, dados)).toEqual({ valido: true, erros: [] });
    for (let i = 64; i < 50_000; i++) dados = [dados];
    expect(await validador.validarDados(versao, dados)).toEqual({
      valido: false,
      erros: [{ caminho: '/dados', mensagem: 'must be at most 64 levels deep' }],
    });
  });

  it('When a stored schema without $id refers to itself with "#", then another process compiles it on first use', async () => {
    const validador = novo();
    const versao = { id: 'lista', esquema: { type: 'object', properties: { proximo: { $ref: '#' } } } };
    expect((await validador.validarDados(versao, { proximo: { proximo: {} } })).valido).toBe(true);
    expect((await validador.validarDados(versao, { proximo: { proximo: 1 } })).erros).toEqual([
      { caminho: '/dados/proximo/proximo', mensagem: 'must be object' },
    ]);
    expect(versao.esquema).not.toHaveProperty('$id');
  });

  it('When one field has a long enum beside a large array of plain items, then the dados is validated (an enum value is a comparison, and the field is one value)', async () => {
    const validador = novo();
    const versao = await registrar(validador, 'pais', {
      type: 'object',
      properties: {
        pais: { enum: Array.from({ length: 250 }, (_, i) => `P${i}`) },
        itens: { type: 'array', items: { type: 'object', properties: { a: { type: 'integer' } } } },
      },
    });
    const dados = { pais: 'P7', itens: Array.from({ length: 50_000 }, (_, a) => ({ a })) };
    expect(await validador.validarDados(versao, dados)).toEqual({ valido: true, erros: [] });
  });
});

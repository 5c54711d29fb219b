import { auth, type Contexto, criarTipo, encerrarContexto, iniciarContexto } from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

/** `{ "not": { "not": … {} } }` nested so that the whole schema is `niveis` objects deep. */
function nots(niveis: number): Record<string, unknown> {
  let esquema: Record<string, unknown> = {};
  for (let i = 1; i < niveis; i++) esquema = { not: esquema };
  return esquema;
}

/** The JSON text of an object schema whose `properties` nest `vezes` times (two JSON levels each). */
const propriedades = (vezes: number) =>
  `${'{"type":"object","properties":{"a":'.repeat(vezes)}{"type":"string"}${'}}'.repeat(vezes)}`;

/** A schema whose JSON text takes exactly `bytes` bytes. */
function comTamanho(bytes: number): Record<string, unknown> {
  const base = JSON.stringify({ type: 'object', description: '' }).length;
  return { type: 'object', description: 'x'.repeat(bytes - base) };
}

const ARVORE = {
  type: 'object',
  required: ['nome'],
  properties: { nome: { type: 'string' }, filhos: { type: 'array', items: { $ref: '#' } } },
  additionalProperties: false,
};
const NO = {
  $defs: {
    no: {
      type: 'object',
      required: ['valor'],
      properties: { valor: { type: 'integer' }, esquerda: { $ref: '#/$defs/no' }, direita: { $ref: '#/$defs/no' } },
    },
  },
  $ref: '#/$defs/no',
};

/** A tree `niveis` levels of `filhos` deep (two JSON levels each, plus the root object). */
function arvore(niveis: number, folha: unknown = 'folha'): unknown {
  let no: unknown = { nome: folha };
  for (let i = 1; i < niveis; i++) no = { nome: `n${i}`, filhos: [no] };
  return no;
}

/** Registers a schema; a string is sent as the JSON text of `esquema` (JSON.stringify overflows on deep values). */
async function registrar(esquema: unknown) {
  const tipo = await criarTipo(ctx);
  const texto = typeof esquema === 'string' ? esquema : JSON.stringify(esquema);
  return ctx
    .api()
    .post('/versao-de-esquema')
    .set(auth(ctx.todas))
    .type('json')
    .send(`{"tipo_de_evento_id":"${tipo.id}","esquema":${texto}}`);
}

const validar = (id: string, dados: unknown) =>
  ctx.api().post(`/versao-de-esquema/${id}/validar`).set(auth(ctx.todas)).send({ dados });

describe('limits of a registered JSON Schema', () => {
  test('When the schema is 65 levels deep, then 422 dados_invalidos at /esquema, before ajv sees it', async () => {
    const response = await registrar(nots(65));
    expect(response.status).toBe(422);
    expect(response.body.codigo).toBe('dados_invalidos');
    expect(response.body.erros).toEqual([{ caminho: '/esquema', mensagem: 'must be at most 64 levels deep' }]);
  });

  test('When the schema is 64 levels deep, then it is stored', async () => {
    const response = await registrar(nots(64));
    expect(response.status).toBe(201);
    expect(response.body.esquema).toEqual(nots(64));
  });

  test('When the schema is 256 KiB + 1 byte of JSON, then 422; at 256 KiB exactly it is stored', async () => {
    const grande = await registrar(comTamanho(256 * 1024 + 1));
    expect(grande.status).toBe(422);
    expect(grande.body.codigo).toBe('dados_invalidos');
    expect(grande.body.erros).toEqual([{ caminho: '/esquema', mensagem: 'must take at most 262144 bytes as JSON' }]);
    expect((await registrar(comTamanho(256 * 1024))).status).toBe(201);
  });

  test('When 800 `not`s are nested, then 422, not a 500 (the shared guard refuses bodies deeper than 256 first)', async () => {
    const response = await registrar(nots(800));
    expect(response.status).toBe(422);
    expect(response.body.codigo).toBe('dados_invalidos');
    expect(response.body.erros).toEqual([
      { caminho: expect.stringMatching(/^\/esquema(\/not)+$/), mensagem: 'must not be nested deeper than 256 levels' },
    ]);
    const rasos = await registrar(nots(100));
    expect(rasos.status).toBe(422);
    expect(rasos.body.erros).toEqual([{ caminho: '/esquema', mensagem: 'must be at most 64 levels deep' }]);
  });

  test('When `properties` nest 1,000 deep, then 422, and a nesting of 20,000 too', async () => {
    for (const vezes of [1000, 20_000]) {
      const response = await registrar(propriedades(vezes));
      expect({ vezes, status: response.status, codigo: response.body.codigo }).toEqual({
        vezes,
        status: 422,
        codigo: 'dados_invalidos',
      });
    }
  });

  test('When a recursive tree schema ($ref "#") is registered, then it is stored and validates a tree', async () => {
    const response = await registrar(ARVORE);
    expect(response.status).toBe(201);
    const { id } = response.body;
    expect((await validar(id, arvore(20))).body).toEqual({ valido: true, erros: [] });
    const errada = await validar(id, arvore(20, 7));
    expect(errada.body.valido).toBe(false);
    expect(errada.body.erros[0].caminho).toBe(`/dados${'/filhos/0'.repeat(19)}/nome`);
  });

  test('When a schema refers to "#/$defs/no" recursively, then it is stored and validates a binary tree', async () => {
    const response = await registrar(NO);
    expect(response.status).toBe(201);
    const dados = { valor: 1, esquerda: { valor: 2, direita: { valor: 3 } }, direita: { valor: 4 } };
    expect((await validar(response.body.id, dados)).body).toEqual({ valido: true, erros: [] });
    expect((await validar(response.body.id, { valor: 1, esquerda: { valor: 'x' } })).body.erros).toEqual([
      { caminho: '/dados/esquerda/valor', mensagem: 'must be integer' },
    ]);
  });

  test('When a schema recurses without descending into the data, then 422 esquema_invalido (it could never end)', async () => {
    const sempre = [
      { $ref: '#' },
      { anyOf: [{ type: 'string' }, { $ref: '#' }] },
      { $defs: { a: { $ref: '#/$defs/b' }, b: { allOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' },
    ];
    for (const esquema of sempre) {
      const response = await registrar(esquema);
      expect({ esquema, status: response.status, codigo: response.body.codigo }).toEqual({
        esquema,
        status: 422,
        codigo: 'esquema_invalido',
      });
    }
  });

  test('When dados nested deeper than 64 levels meet a recursive schema, then /validar answers 422, never a 500', async () => {
    const { id } = (await registrar({ type: 'array', items: { $ref: '#' } })).body;
    const aninhados = (niveis: number) => `{"dados":${'['.repeat(niveis)}${']'.repeat(niveis)}}`;
    const enviar = (texto: string) =>
      ctx.api().post(`/versao-de-esquema/${id}/validar`).set(auth(ctx.todas)).type('json').send(texto);
    expect((await enviar(aninhados(64))).body).toEqual({ valido: true, erros: [] });
    const fundo = await enviar(aninhados(100));
    expect(fundo.status).toBe(422);
    expect(fundo.body.erros).toEqual([{ caminho: '/dados', mensagem: 'must be at most 64 levels deep' }]);
    // Deeper than the shared guard's bound (256), the guard answers before the route.
    const muitoFundo = await enviar(aninhados(100_000));
    expect(muitoFundo.status).toBe(422);
    expect(muitoFundo.body.erros).toEqual([
      { caminho: expect.stringMatching(/^\/dados(\/0)+$/), mensagem: 'must not be nested deeper than 256 levels' },
    ]);
  });

  test('When a chain of 5,000 $refs is registered, then 422 esquema_invalido that says why, not a stack overflow', async () => {
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < 5000; i++) defs[`a${i}`] = i < 4999 ? { $ref: `#/$defs/a${i + 1}` } : { type: 'string' };
    const response = await registrar({ $defs: defs, $ref: '#/$defs/a0' });
    expect(response.status).toBe(422);
    expect(response.body.codigo).toBe('esquema_invalido');
    expect(JSON.stringify(response.body)).not.toContain('call stack');
  });
});

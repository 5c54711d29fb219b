import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { type Cenario, cenario } from './cenario.test-support';

/**
 * POST /eventos is served on node:http when its URL is the path exactly and its body plain JSON
 * (docs/decisions/hub-api-publication-on-node-http.md), and by express otherwise: the same
 * request with a query string takes express's way. Every case is sent both ways and must be
 * answered alike (status, the headers a client reads, the body), refusals recorded alike.
 */
let ctx: Contexto;
let c: Cenario;
beforeAll(async () => {
  ctx = await iniciarContexto();
  c = await cenario(ctx);
});
afterAll(() => encerrarContexto(ctx));

const RAPIDO = '/eventos';
const EXPRESS = '/eventos?caminho=express';

type Envio = { corpo: string | Buffer | object; cabecalhos?: Record<string, string>; token?: string | null };

async function enviar(url: string, envio: Envio) {
  let pedido = ctx.api().post(url).set('content-type', 'application/json');
  const token = envio.token === undefined ? c.tokenDoDono : envio.token;
  if (token) pedido = pedido.set(auth(token));
  if (envio.cabecalhos) pedido = pedido.set(envio.cabecalhos);
  const response = await pedido.send(envio.corpo as object);
  return response;
}

/** What must be the same both ways: what changes per event (its ids, times) left out. */
function comparavel(response: Awaited<ReturnType<typeof enviar>>) {
  const { status, headers } = response;
  const corpo = JSON.parse(response.text || 'null') as Record<string, unknown> | null;
  if (corpo && status === 201) {
    for (const campo of ['id', 'recebido_em', 'ocorrido_em']) corpo[campo] = typeof corpo[campo];
    corpo.entregas = (corpo.entregas as unknown[]).length;
  }
  return {
    status,
    corpo,
    tipo: headers['content-type'],
    tamanho: status === 201 ? undefined : headers['content-length'],
    etag: headers.etag,
    autenticacao: headers['www-authenticate'],
    repetir: headers['retry-after'],
    id: typeof headers['x-request-id'],
    cabecalhos: Object.keys(headers)
      .filter((nome) => nome !== 'date')
      .sort(),
  };
}

const corpo = () => c.corpo();
const texto = (valor: unknown) => JSON.stringify(valor);
const profundo = (niveis: number) => '['.repeat(niveis) + ']'.repeat(niveis);

const casos: [string, () => Envio][] = [
  ['a publication', () => ({ corpo: corpo() })],
  ['no token', () => ({ corpo: corpo(), token: null })],
  ['a token that is not a JWT', () => ({ corpo: corpo(), token: 'nao-e-um-token' })],
  ["a panel user's token", () => ({ corpo: corpo(), token: ctx.todas })],
  ['a body that is not JSON', () => ({ corpo: '{"tipo_de_evento_id": ' })],
  ['a JSON string at the top', () => ({ corpo: '"texto"' })],
  ['a JSON array at the top', () => ({ corpo: '[1, 2]' })],
  ['an empty body', () => ({ corpo: '' })],
  ['only white space', () => ({ corpo: '  \n ' })],
  ['a byte order mark first', () => ({ corpo: `\uFEFF${texto(corpo())}` })],
  ['bytes that are not UTF-8', () => ({ corpo: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) })],
  ['NUL in dados', () => ({ corpo: { ...corpo(), dados: { nome: 'a\u0000b' } } })],
  ['a lone surrogate in dados', () => ({ corpo: texto({ ...corpo(), dados: 'x' }).replace('"x"', '"\\ud800"') })],
  ['__proto__ in dados', () => ({ corpo: texto({ ...corpo(), dados: { a: 1 } }).replace('"a"', '"__proto__"') })],
  ['a number too large', () => ({ corpo: texto({ ...corpo(), dados: 1 }).replace(/"dados":1/, '"dados":1e999') })],
  [
    'dados nested too deep',
    () => ({ corpo: texto({ ...corpo(), dados: 0 }).replace('"dados":0', `"dados":${profundo(300)}`) }),
  ],
  [
    'a name repeated in dados',
    () => ({ corpo: texto({ ...corpo(), dados: { a: 1 } }).replace('{"a":1}', '{"a":1,"a":2}') }),
  ],
  ['a field missing', () => ({ corpo: { ...corpo(), entidade_id: undefined, dados: undefined } })],
  ['an unknown field', () => ({ corpo: { ...corpo(), extra: 1 } })],
  [
    'an event type that does not exist',
    () => ({ corpo: { ...corpo(), tipo_de_evento_id: '01900000-0000-7000-8000-00000000ffff' } }),
  ],
  ['a version that does not exist', () => ({ corpo: { ...corpo(), versao_do_esquema: 9 } })],
  ['a malformed Idempotency-Key', () => ({ corpo: corpo(), cabecalhos: { 'idempotency-key': 'á' } })],
  ['a caller request id', () => ({ corpo: corpo(), cabecalhos: { 'x-request-id': 'pedido-do-cliente.1' } })],
  [
    'a traceparent',
    () => ({ corpo: corpo(), cabecalhos: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } }),
  ],
];

describe('POST /eventos on node:http and through express', () => {
  test.each(casos)('When it is sent %s both ways, then both answer alike', async (_nome, envio) => {
    const rapido = comparavel(await enviar(RAPIDO, envio()));
    const express = comparavel(await enviar(EXPRESS, envio()));
    expect(rapido).toEqual(express);
  });

  test('When a key is used both ways, then the second answers the first event again', async () => {
    const cabecalhos = { 'idempotency-key': `chave-${Date.now()}` };
    const primeira = await enviar(RAPIDO, { corpo: corpo(), cabecalhos });
    const segunda = await enviar(EXPRESS, { corpo: corpo(), cabecalhos });
    expect([primeira.status, segunda.status]).toEqual([201, 201]);
    expect(segunda.body.id).toBe(primeira.body.id);
  });

  test('When a caller sends a sane request id, then the fast path answers with it', async () => {
    const response = await enviar(RAPIDO, { corpo: corpo(), cabecalhos: { 'x-request-id': 'pedido-do-cliente.2' } });
    expect(response.headers['x-request-id']).toBe('pedido-do-cliente.2');
  });

  test('When refusals come both ways, then each is recorded with its body and application', async () => {
    const entidade = `recusa-${Date.now()}`;
    const envio = { corpo: { ...corpo(), entidade_id: entidade, versao_do_esquema: 9 } };
    expect((await enviar(RAPIDO, envio)).status).toBe(422);
    expect((await enviar(EXPRESS, envio)).status).toBe(422);
    const linhas = await ctx.hub.db.eventoRecusado.findMany({ where: { codigo: 'versao_inexistente' } });
    const nossas = linhas.filter((l) => JSON.stringify(l).includes(entidade));
    expect(nossas).toHaveLength(2);
    expect(nossas[0]).toMatchObject({ ...nossas[1], id: nossas[0]!.id, recebidoEm: nossas[0]!.recebidoEm });
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@hub/log';
import { addKey, generateKey, type KeySet, publicJwks, signersOf, signWebhook } from '@hub/signing';
import { createVerifier } from '@hub/webhook-verifier';
import request from 'supertest';
import { createApp } from '../../app';

/** A stand-in for the hub's GET /.well-known/jwks.json: a real HTTP server whose keys can change. */
class JwksServer {
  hits = 0;
  keys: KeySet = { keys: [generateKey()] };
  private server!: Server;

  async start(): Promise<string> {
    this.server = createServer((_req, res) => {
      this.hits++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(publicJwks(this.keys)));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

const logger = createLogger('demo-receiver');
let hub: JwksServer;
let url: string;
beforeEach(async () => {
  hub = new JwksServer();
  url = await hub.start();
});
afterEach(() => hub.close());

const receiver = () => createApp({ logger, verifier: createVerifier({ jwksUrl: url }) });

/** The subscription whose url_de_destino is this receiver's /webhooks/{id}, and another one's. */
const ASSINATURA = '0193a1b2-0000-7000-8000-00000000a001';
const OUTRA_ASSINATURA = '0193a1b2-0000-7000-8000-00000000b002';

let sequence = 0;
/** A delivery body as the hub sends it, signed by the real signer with the given key set. */
function delivery(keys: KeySet, overrides: { id?: string; timestamp?: number; assinatura_id?: string | null } = {}) {
  const id = overrides.id ?? `0193a1b2-0000-7000-8000-${String(++sequence).padStart(12, '0')}`;
  const assinatura = overrides.assinatura_id === undefined ? ASSINATURA : overrides.assinatura_id;
  const body = JSON.stringify({
    id: `evt-${sequence}`,
    tipo: 'pedido.criado',
    versao_do_esquema: 1,
    entidade_id: 'P-1',
    ocorrido_em: '2026-11-21T21:00:00.000Z',
    recebido_em: '2026-11-21T21:00:00.010Z',
    aplicativo_publicador_id: '0193a1b2-0000-7000-8000-000000000002',
    ...(assinatura === null ? {} : { assinatura_id: assinatura }),
    dados: { pedido_id: 'P-1', total_centavos: 1990 },
  });
  const headers = signWebhook({ id, body, timestamp: overrides.timestamp }, signersOf(keys));
  return { id, body, headers: { ...headers, 'content-type': 'application/json' } as Record<string, string> };
}

const post = (app: ReturnType<typeof receiver>, d: ReturnType<typeof delivery>, assinatura = ASSINATURA) =>
  request(app).post(`/webhooks/${assinatura}`).set(d.headers).send(d.body);

describe('demo-receiver POST /webhooks', () => {
  it('When a delivery is signed by a key of the hub JWKS, then 204 and GET /recebidos lists it', async () => {
    const app = receiver();
    const d = delivery(hub.keys);
    await post(app, d).expect(204);
    const listed = await request(app).get('/recebidos').expect(200);
    expect(listed.body).toEqual([
      {
        webhook_id: d.id,
        assinado_em: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        recebido_em: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        chave_id: hub.keys.keys[0]!.kid,
        corpo: JSON.parse(d.body),
      },
    ]);
  });

  it('When the body is changed after signing, then 401 assinatura_invalida as problem+json and nothing is kept', async () => {
    const app = receiver();
    const d = delivery(hub.keys);
    const response = await post(app, { ...d, body: d.body.replace('1990', '1') }).expect(401);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      status: 401,
      codigo: 'assinatura_invalida',
      detail: expect.stringContaining('invalid_signature'),
    });
    expect((await request(app).get('/recebidos').expect(200)).body).toEqual([]);
  });

  it("When a genuine delivery for another subscription is replayed to this subscription's URL, or names none, then 401 subscription_mismatch and nothing is kept", async () => {
    const app = receiver();
    const deOutra = delivery(hub.keys, { assinatura_id: OUTRA_ASSINATURA });
    await post(app, deOutra, OUTRA_ASSINATURA).expect(204);
    const replay = await post(app, deOutra, ASSINATURA).expect(401);
    expect(replay.body).toMatchObject({
      codigo: 'assinatura_invalida',
      detail: expect.stringContaining(`subscription_mismatch): the delivery is for subscription ${OUTRA_ASSINATURA}`),
    });
    const semAssinatura = await post(app, delivery(hub.keys, { assinatura_id: null })).expect(401);
    expect(semAssinatura.body.detail).toContain('names no subscription');
    const kept = (await request(app).get('/recebidos').expect(200)).body;
    expect(kept.map((r: { webhook_id: string }) => r.webhook_id)).toEqual([deOutra.id]);
  });

  it('When the path names no subscription id, then 404 and nothing is verified', async () => {
    const app = receiver();
    await request(app).post('/webhooks').set(delivery(hub.keys).headers).send('{}').expect(404);
    await request(app).post('/webhooks/nao-e-um-id').set(delivery(hub.keys).headers).send('{}').expect(404);
    expect(hub.hits).toBe(0);
  });

  it('When the timestamp is more than 5 minutes old, then 401', async () => {
    const app = receiver();
    const d = delivery(hub.keys, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    const response = await post(app, d).expect(401);
    expect(response.body).toMatchObject({
      codigo: 'assinatura_invalida',
      detail: expect.stringContaining('timestamp_too_old'),
    });
  });

  it('When the delivery is signed by a key the hub does not publish, then 401 after one refetch, and no second refetch within a minute', async () => {
    const app = receiver();
    await post(app, delivery(hub.keys)).expect(204);
    expect(hub.hits).toBe(1);
    const stranger: KeySet = { keys: [generateKey()] };
    const response = await post(app, delivery(stranger)).expect(401);
    expect(response.body).toMatchObject({
      codigo: 'assinatura_invalida',
      detail: expect.stringContaining('unknown_key'),
    });
    expect(hub.hits).toBe(2);
    await post(app, delivery(stranger)).expect(401);
    expect(hub.hits).toBe(2);
  });

  it('When the hub adds a key after the JWKS was cached, then a delivery signed by the new key is verified after a refetch', async () => {
    const app = receiver();
    await post(app, delivery(hub.keys)).expect(204);
    const { set, key } = addKey(hub.keys);
    hub.keys = set;
    const onlyNew: KeySet = { keys: [set.keys.find((k) => k.kid === key.kid)!] };
    await post(app, delivery(onlyNew)).expect(204);
    expect(hub.hits).toBe(2);
    expect((await request(app).get('/recebidos')).body[0].chave_id).toBe(key.kid);
  });

  it('When the same webhook-id arrives twice (a retry), then both are 204 and it is kept once', async () => {
    const app = receiver();
    const first = delivery(hub.keys, { id: 'msg_repetida' });
    await post(app, first).expect(204);
    await post(app, delivery(hub.keys, { id: 'msg_repetida' })).expect(204);
    const listed = (await request(app).get('/recebidos').expect(200)).body;
    expect(listed.map((r: { webhook_id: string }) => r.webhook_id)).toEqual(['msg_repetida']);
  });

  it('When several deliveries arrive, then /recebidos lists them newest first', async () => {
    const app = receiver();
    const ids = [delivery(hub.keys), delivery(hub.keys), delivery(hub.keys)];
    for (const d of ids) await post(app, d).expect(204);
    const listed = (await request(app).get('/recebidos').expect(200)).body;
    expect(listed.map((r: { webhook_id: string }) => r.webhook_id)).toEqual(ids.map((d) => d.id).reverse());
  });

  it('When signature headers are missing or the body is not JSON, then 401 and 415', async () => {
    const app = receiver();
    const d = delivery(hub.keys);
    await request(app).post(`/webhooks/${ASSINATURA}`).set('content-type', 'application/json').send(d.body).expect(401);
    const notJson = await request(app)
      .post(`/webhooks/${ASSINATURA}`)
      .set(d.headers)
      .set('content-type', 'text/plain')
      .send(d.body)
      .expect(415);
    expect(notJson.body.codigo).toBe('tipo_de_conteudo_invalido');
  });

  it('When the body is over 1 MB, then 413 problem+json', async () => {
    const app = receiver();
    const response = await request(app)
      .post(`/webhooks/${ASSINATURA}`)
      .set('content-type', 'application/json')
      .send(JSON.stringify({ x: 'a'.repeat(1024 * 1024 + 1) }))
      .expect(413);
    expect(response.body.codigo).toBe('corpo_grande_demais');
  });
});

describe('demo-receiver readiness', () => {
  it('When the hub JWKS answers, then /saude/prontidao is 200', async () => {
    await request(receiver()).get('/saude/prontidao').expect(200);
  });

  it('When the hub JWKS cannot be reached before any key is cached, then deliveries get 503 and readiness 503', async () => {
    await hub.close();
    const app = receiver();
    const response = await post(app, delivery(hub.keys)).expect(503);
    expect(response.body.codigo).toBe('jwks_indisponivel');
    await request(app).get('/saude/prontidao').expect(503);
    hub = new JwksServer();
    url = await hub.start();
  });
});

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '@hub/testing';
import { api, closeConnections } from './http-client';
import { type Platform, startPlatform } from './platform';

/**
 * The whole chain as it runs in production: an application publishes through the gateway, hub-api
 * stores the delivery and relays its job, the delivery worker signs and POSTs it, and the demo
 * receiver verifies the signature against hub-api's JWKS.
 */
const ROOT = path.resolve(__dirname, '../../..');
let platform: Platform;

beforeAll(async () => {
  platform = await startPlatform();
}, 180_000);
afterAll(async () => {
  closeConnections();
  await platform?.stop();
}, 60_000);

test('When an application publishes an event, then the subscriber (the demo receiver) gets it signed and verifies it', async () => {
  const identity = platform.urls['identity-dev'];
  const receiver = platform.urls['demo-receiver'];
  const semear = () =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/scripts/seed-demo.ts'], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_URL: platform.gatewayUrl, IDENTITY_URL: identity, DEMO_RECEIVER_URL: receiver },
    });
  // The subscription's URL is the receiver's /webhooks/{its id}; a second run finds it there.
  expect((await semear()).stdout).toMatch(new RegExp(`subscription .*-> ${receiver}/webhooks/[0-9a-f-]{36} `));
  expect((await semear()).stdout).toContain('nothing to create');
  const master = (
    await api<{ access_token: string }>(identity, undefined, 'POST', '/token', {
      email: 'demo@empresa.com.br',
      master: true,
    })
  ).body.access_token;
  const aplicativo = (
    await api<{ access_token: string }>(identity, undefined, 'POST', '/token/aplicativo', {
      client_id: 'loja-demo',
    })
  ).body.access_token;
  const [tipo] = (
    await api<{ id: string }[]>(platform.gatewayUrl, master, 'GET', '/tipo-de-evento/filtro?nome=pedido.criado')
  ).body;

  const dados = {
    pedido_id: 'P-9',
    cliente: { nome: 'Ana', email: 'ana@example.com' },
    itens: [{ sku: 'X', quantidade: 1, preco_centavos: 100 }],
    total_centavos: 100,
  };
  const publicado = await api<{ id: string }>(platform.gatewayUrl, aplicativo, 'POST', '/eventos', {
    tipo_de_evento_id: tipo!.id,
    versao_do_esquema: 1,
    entidade_id: 'P-9',
    dados,
  });
  expect(publicado.status).toBe(201);

  const recebido = await waitFor(
    async () => {
      const lista = (
        await api<{ webhook_id: string; chave_id: string | null; corpo: { id: string } }[]>(
          receiver,
          undefined,
          'GET',
          '/recebidos',
        )
      ).body;
      return lista.find((r) => r.corpo.id === publicado.body.id);
    },
    { timeoutMs: 20_000, what: 'the delivery at the demo receiver' },
  );
  expect(recebido.corpo).toMatchObject({
    id: publicado.body.id,
    tipo: 'pedido.criado',
    versao_do_esquema: 1,
    assinatura_id: expect.any(String),
    dados,
  });
  expect(recebido.chave_id).toEqual(expect.any(String));
}, 60_000);

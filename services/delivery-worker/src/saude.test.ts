import { generateKey, publicJwks } from '@hub/signing';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import {
  createTestHub,
  deleteTestTopology,
  startDeliveryWorkerForTests,
  type TestHub,
} from './delivery-worker.test-support';

let hub: TestHub;
let hubApi: Receptor;
let outroHub: Receptor;

beforeAll(async () => {
  hub = await createTestHub();
  const json = (corpo: unknown) => JSON.stringify(corpo);
  hubApi = await iniciarReceptor({
    '/.well-known/jwks.json': (_req, res) => res.writeHead(200).end(json(hub.jwks)),
  });
  // A hub-api with another key file: it publishes keys the worker does not sign with.
  outroHub = await iniciarReceptor({
    '/.well-known/jwks.json': (_req, res) => res.writeHead(200).end(json(publicJwks({ keys: [generateKey()] }))),
  });
});
afterAll(async () => {
  await hubApi?.fechar();
  await outroHub?.fechar();
  await hub?.close();
});

it('When the worker signs with the key hub-api publishes, then it is ready; with a key hub-api does not publish, it is not ready and says which', async () => {
  const pronto = await startDeliveryWorkerForTests(hub, { HUB_API_URL: hubApi.url('/') });
  try {
    const resposta = await fetch(`${pronto.url}/saude/prontidao`);
    expect(resposta.status).toBe(200);
    expect(await resposta.json()).toMatchObject({ dependencias: { jwks: 'ok', chaves: 'ok' } });
  } finally {
    await pronto.close();
  }
  const alheio = await startDeliveryWorkerForTests(hub, { HUB_API_URL: outroHub.url('/') });
  try {
    const resposta = await fetch(`${alheio.url}/saude/prontidao`);
    expect(resposta.status).toBe(503);
    const corpo = (await resposta.json()) as { dependencias: Record<string, string> };
    expect(corpo.dependencias.jwks).toContain(hub.jwks.keys[0]!.kid);
    expect(corpo.dependencias.postgresql).toBe('ok');
    // /saude only says the process is alive.
    expect((await fetch(`${alheio.url}/saude`)).status).toBe(200);
  } finally {
    await alheio.close();
    await deleteTestTopology(hub);
  }
});

import { stat } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import type { Broker } from '@hub/broker';
import { deleteDeliveryTopology } from '@hub/contracts';
import { connectTestBroker, type SpawnedService, spawnService, waitFor } from '@hub/testing';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import { cenario, createTestHub, type TestHub } from './delivery-worker.test-support';

const MAIN = path.join(__dirname, 'main.ts');
let hub: TestHub;
let receptor: Receptor;
let mudo: Receptor;
let broker: Broker;
let service: SpawnedService | undefined;
const segurados: http.ServerResponse[] = [];

beforeAll(async () => {
  hub = await createTestHub();
  broker = await connectTestBroker('delivery-worker-main');
  receptor = await iniciarReceptor({
    '/segurar': (_req, res) => {
      segurados.push(res);
    },
  });
  // Another origin: the per-destination limit of one is per receiver.
  mudo = await iniciarReceptor({ '/mudo': () => undefined });
});
afterAll(async () => {
  await service?.kill();
  await broker?.withChannel((ch) => deleteDeliveryTopology(ch, hub.topologia)).catch(() => undefined);
  await broker?.close();
  await receptor?.fechar();
  await mudo?.fechar();
  await hub?.close();
});

test('When no signing key is configured, then main refuses to start, naming the key file, and creates none', async () => {
  const semChave = spawnService(MAIN, {
    ...hub.env,
    DELIVERY_WORKER_PORT: '0',
    HUB_SIGNING_KEYS_FILE: path.join(path.dirname(hub.keysFile), 'nao-existe.json'),
    HUB_SIGNING_KEYS: undefined,
  });
  const code = await new Promise<number | null>((resolve) => semChave.child.once('exit', resolve));
  expect(code).toBe(1);
  expect(semChave.output()).toMatch(/HUB_SIGNING_KEYS_FILE: the key file .*nao-existe\.json does not exist/);
  expect(semChave.output()).toMatch(/never creates/);
  await expect(stat(path.join(path.dirname(hub.keysFile), 'nao-existe.json'))).rejects.toThrow(/ENOENT/);
}, 30_000);

test("When SIGTERM arrives, then attempts under way finish and are recorded (logged with the publication's request id), the rest go back to the queue untouched, and main exits 0", async () => {
  service = spawnService(MAIN, {
    ...hub.env,
    DELIVERY_WORKER_PORT: '0',
    DELIVERY_RETRY_DELAYS: '20ms',
    DELIVERY_TIMEOUT: '60s',
    DELIVERY_STOP_TIMEOUT: '1500ms',
    DELIVERY_CONCURRENCY_PER_DESTINATION: '1',
    HUB_SIGNING_KEYS: undefined,
    // A successful attempt's line is at debug (a failed one at info).
    LOG_LEVEL: 'debug',
  });
  const url = await service.url('delivery-worker');
  await waitFor(async () => (await fetch(`${url}/saude/prontidao`)).status === 200, { timeoutMs: 15_000 });

  const c = await cenario(hub);
  const segurar = await c.assinar(receptor.url('/segurar'));
  const paraOMudo = await c.assinar(mudo.url('/mudo'));
  const [terminara] = await c.entregar([segurar], { broker, requestId: 'publicacao-req-1' });
  // Two jobs to a receiver that never answers, one request at a time: one under way, one waiting its turn.
  const presos = [...(await c.entregar([paraOMudo], { broker })), ...(await c.entregar([paraOMudo], { broker }))];
  await waitFor(() => segurados.length === 1 && mudo.de('/mudo').length === 1, { what: 'the requests under way' });

  service.child.kill('SIGTERM');
  await waitFor(() => /"signal":"SIGTERM".*stopping/.test(service!.output()), { what: 'the stop begun' });
  // The attempt under way is answered after the stop began: it is still recorded.
  segurados[0]!.writeHead(200).end('ok');
  const code = await service.stop();
  expect({ code, output: code === 0 ? '' : service.output() }).toEqual({ code: 0, output: '' });

  // The attempt's log line carries the request id of the publication that caused it.
  const linha = service
    .output()
    .split('\n')
    .find((l) => l.includes('"msg":"delivery attempt"') && l.includes(terminara!.entrega_id));
  expect(JSON.parse(linha ?? '{}')).toMatchObject({
    request_id: 'publicacao-req-1',
    entrega_id: terminara!.entrega_id,
    resultado: 'sucesso',
    status_http: 200,
  });
  const concluida = await hub.db.entrega.findUniqueOrThrow({ where: { id: terminara!.entrega_id } });
  expect(concluida.situacao).toBe('concluida');
  expect(await hub.db.tentativa.count({ where: { entregaId: terminara!.entrega_id } })).toBe(1);
  // The one cut at the stop bound and the one that never got its turn: no attempt recorded, jobs back in the queue.
  for (const t of presos) {
    expect(await hub.db.tentativa.count({ where: { entregaId: t.entrega_id } })).toBe(0);
    expect((await hub.db.entrega.findUniqueOrThrow({ where: { id: t.entrega_id } })).situacao).not.toBe('concluida');
  }
  const fila = await broker.withChannel((ch) => ch.checkQueue(hub.topologia.filaDeEntregas));
  expect(fila.messageCount).toBe(2);
  const ids = await broker.withChannel(async (ch) => {
    const vistos: string[] = [];
    for (let m = await ch.get(hub.topologia.filaDeEntregas); m; m = await ch.get(hub.topologia.filaDeEntregas)) {
      vistos.push(String(m.properties.messageId));
      ch.ack(m);
    }
    return vistos.sort();
  });
  expect(ids).toEqual(presos.map((t) => t.entrega_id).sort());
}, 60_000);

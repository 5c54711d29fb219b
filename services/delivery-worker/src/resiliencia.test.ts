import type http from 'node:http';
import path from 'node:path';
import type { Broker } from '@hub/broker';
import { deleteDeliveryTopology, type TrabalhoDeEntrega } from '@hub/contracts';
import {
  connectTestBroker,
  type PrivatePostgres,
  type SpawnedService,
  spawnService,
  startPrivatePostgres,
  waitFor,
} from '@hub/testing';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import { cenario, createTestHub, type TestHub } from './delivery-worker.test-support';

/**
 * The worker process (main.ts) on a PostgreSQL server of this file's own, restarted while jobs are
 * claimed, POSTed and recorded: it stays up, its readiness follows the database, and every delivery
 * ends concluida once the database is back.
 */
const MAIN = path.join(__dirname, 'main.ts');

let postgres: PrivatePostgres;
let hub: TestHub;
let broker: Broker;
let receptor: Receptor;
let worker: SpawnedService;
let url: string;
const presos: http.ServerResponse[] = [];
let segurar = false;

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  hub = await createTestHub(postgres.url);
  broker = await connectTestBroker('delivery-worker-resiliencia');
  receptor = await iniciarReceptor({
    '/r': (_req, res) => {
      if (segurar) presos.push(res);
      else res.writeHead(200).end('ok');
    },
  });
  worker = spawnService(MAIN, {
    ...hub.env,
    DELIVERY_WORKER_PORT: '0',
    DELIVERY_RETRY_DELAYS: '20ms,40ms',
    DELIVERY_TIMEOUT: '5s',
    DELIVERY_STOP_TIMEOUT: '2s',
    DELIVERY_CONCURRENCY_PER_DESTINATION: '50',
    DELIVERY_DESTINOS_REFRESH: '500ms',
    HUB_SIGNING_KEYS: undefined,
  });
  url = await worker.url('delivery-worker', 60_000);
}, 90_000);

afterAll(async () => {
  await worker?.kill();
  await broker?.withChannel((ch) => deleteDeliveryTopology(ch, hub.topologia)).catch(() => undefined);
  await broker?.close();
  await receptor?.fechar();
  await hub?.close();
  await postgres?.close();
});

const prontidao = async () => (await fetch(`${url}/saude/prontidao`)).status;
const vivo = () => (worker.child.exitCode === null && worker.child.signalCode === null ? 'vivo' : worker.output());
const concluidas = (ids: string[]) => hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } });

async function lote(quantidade: number): Promise<string[]> {
  const c = await cenario(hub);
  const assinaturas = [];
  for (let i = 0; i < 10; i += 1) assinaturas.push(await c.assinar(`${receptor.url('/r')}?a=${i}`, 5));
  const trabalhos: TrabalhoDeEntrega[] = [];
  while (trabalhos.length < quantidade) trabalhos.push(...(await c.entregar(assinaturas, { broker })));
  return trabalhos.map((t) => t.entrega_id);
}

test('When PostgreSQL stops while deliveries are under way and restarts, then the worker stays up, readiness goes 503 and back, and every delivery ends concluida', async () => {
  await waitFor(async () => (await prontidao()) === 200, { timeoutMs: 20_000, what: 'the worker ready' });
  segurar = true;
  const ids = await lote(200);
  // POSTs under way (held by the receiver), the rest of the jobs claimed or waiting in the queue.
  await waitFor(() => presos.length >= 10, { timeoutMs: 20_000, what: 'POSTs under way' });

  await postgres.stop('fast');
  await waitFor(async () => (await prontidao()) === 503, { timeoutMs: 15_000, what: 'readiness 503' });
  // The held POSTs are answered now: their attempts cannot be recorded while the database is down.
  segurar = false;
  for (const res of presos.splice(0)) res.writeHead(200).end('ok');
  await waitFor(() => /attempt not counted/.test(worker.output()), { timeoutMs: 15_000, what: 'jobs waiting' });

  await postgres.start();
  await waitFor(async () => (await prontidao()) === 200, { timeoutMs: 30_000, what: 'readiness 200' });
  await waitFor(async () => (await concluidas(ids)) === ids.length, {
    timeoutMs: 60_000,
    what: 'every delivery concluida',
  });
  // Every one reached the receiver; nothing was dead-lettered.
  const noFio = new Set(receptor.de('/r').map((r) => String(r.cabecalhos['webhook-id'])));
  expect(ids.filter((id) => !noFio.has(id))).toEqual([]);
  const erro = await broker.withChannel((ch) => ch.checkQueue(hub.topologia.filaDeErro));
  expect(erro.messageCount).toBe(0);
  expect(vivo()).toBe('vivo');
}, 120_000);

test('When PostgreSQL crashes (SIGKILL) and comes back, then the worker stays up and delivers what comes next', async () => {
  await postgres.kill();
  await waitFor(async () => (await prontidao()) === 503, { timeoutMs: 15_000, what: 'readiness 503' });
  await postgres.start();
  const ids = await lote(20);
  await waitFor(async () => (await concluidas(ids)) === ids.length, {
    timeoutMs: 60_000,
    what: 'the new deliveries concluida',
  });
  expect(vivo()).toBe('vivo');
}, 90_000);

import { waitFor } from '@hub/testing';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import {
  cenario,
  createTestHub,
  deleteTestTopology,
  startDeliveryWorkerForTests,
  type TestDeliveryWorker,
  type TestHub,
} from './delivery-worker.test-support';

// The worker's writes of a delivery (its claim, the record of each attempt, a retry, the error
// queue) change no indexed column of entrega (migration 018), so PostgreSQL makes them HOT updates:
// no index entry written. A column the worker writes that an index of entrega names (in its keys, an
// expression or a predicate) would make every one of them rewrite all six indexes; this counts them
// (pg_stat_user_tables, a count reported by the worker's connections once idle, not a timing).
const PASSOS = '20ms';

let hub: TestHub;
let worker: TestDeliveryWorker;
let receptor: Receptor;

beforeAll(async () => {
  hub = await createTestHub();
  receptor = await iniciarReceptor({
    '/ok': (_req, res) => res.writeHead(200).end('recebido'),
    '/erro': (_req, res) => res.writeHead(500).end('falhou'),
  });
  worker = await startDeliveryWorkerForTests(hub, { DELIVERY_RETRY_DELAYS: PASSOS });
});
afterAll(async () => {
  await worker?.close();
  if (worker) await deleteTestTopology(hub);
  await receptor?.fechar();
  await hub?.close();
});

const contagem = async () =>
  (
    await hub.db.$queryRaw<[{ upd: number; hot: number }]>`
      select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = 'entrega'`
  )[0];

it('When deliveries are claimed and recorded, concluded or retried into the error queue, then every update of their rows is HOT', async () => {
  const c = await cenario(hub);
  const ok = await c.assinar(receptor.url('/ok'));
  const erro = await c.assinar(receptor.url('/erro'), 2);
  const antes = await contagem();
  const trabalhos = [
    ...(await c.entregar([ok, erro], { broker: worker.broker })),
    ...(await c.entregar([ok, erro], { broker: worker.broker })),
  ];
  const finais = { [ok.id]: 'concluida', [erro.id]: 'fila_de_erro' };
  await waitFor(
    async () => {
      const linhas = await hub.db.entrega.findMany({ where: { id: { in: trabalhos.map((t) => t.entrega_id) } } });
      return linhas.every((l) => l.situacao === finais[l.assinaturaId]);
    },
    { what: 'every delivery final', timeoutMs: 20_000 },
  );
  // A success is a claim and a record (2 updates); a failure twice over is 4.
  const esperadas = 2 * 2 + 2 * 4;
  const depois = await waitFor(
    async () => {
      const agora = await contagem();
      return agora.upd - antes.upd >= esperadas ? agora : undefined;
    },
    { what: "the worker's updates reported", timeoutMs: 30_000 },
  );
  expect({ updates: depois.upd - antes.upd, hot: depois.hot - antes.hot }).toEqual({
    updates: esperadas,
    hot: esperadas,
  });
});

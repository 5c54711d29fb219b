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

// The worker's record inserts a batch's attempts in one statement; tentativa's statement trigger
// (migration 024) adds them to resumo_por_hora's stored counts, on the transaction's slice, where the
// same statement's tallies go too (entregas_concluidas, tentativas_com_falha). Many deliveries at
// once, succeeding and failing: every one ends, none of the records deadlocked, and every hour's
// counts equal the attempts stored.
const PASSOS = '20ms,40ms,80ms';
const PASSOS_MS = [20, 40, 80];

let hub: TestHub;
let worker: TestDeliveryWorker;
let receptor: Receptor;
beforeAll(async () => {
  hub = await createTestHub();
  const vistas = new Set<string>();
  receptor = await iniciarReceptor({
    '/ok': (_req, res) => res.writeHead(200).end('recebido'),
    '/erro': (_req, res) => res.writeHead(500).end('falhou'),
    // a delivery's first attempt fails, its second succeeds
    '/depois': (req, res) => {
      const id = String(req.headers['webhook-id']);
      res.writeHead(vistas.has(id) ? 200 : 503).end();
      vistas.add(id);
    },
  });
  // one receiver, so one origin for every subscription: its circuit must not open on the failures
  worker = await startDeliveryWorkerForTests(hub, {
    DELIVERY_RETRY_DELAYS: PASSOS,
    DELIVERY_CIRCUIT_MIN_FAILURES: '0',
  });
});
afterAll(async () => {
  await worker?.close();
  if (worker) await deleteTestTopology(hub, PASSOS_MS);
  await receptor?.fechar();
  await hub?.close();
});

test('When many deliveries succeed, retry and fail at once, then the stored attempts of each hour (all and successful) equal the attempts recorded', async () => {
  const c = await cenario(hub);
  const assinaturas = [
    await c.assinar(receptor.url('/ok')),
    await c.assinar(receptor.url('/erro'), 3),
    await c.assinar(receptor.url('/depois'), 4),
  ];
  const trabalhos = (
    await Promise.all(Array.from({ length: 30 }, () => c.entregar(assinaturas, { broker: worker.broker })))
  ).flat();
  await waitFor(
    async () =>
      (await hub.db.entrega.count({
        where: { id: { in: trabalhos.map((t) => t.entrega_id) }, situacao: { in: ['concluida', 'fila_de_erro'] } },
      })) === trabalhos.length,
    { timeoutMs: 45_000, what: 'every delivery final' },
  );

  const [real, fatias] = await Promise.all([
    hub.db.$queryRaw<{ hora: Date; n: number; s: number }[]>`
      select date_trunc('hour', iniciada_em, 'UTC') as hora, count(*)::int as n, count(*) filter (where sucesso)::int as s
        from tentativa group by 1 order by 1`,
    hub.db.$queryRaw<{ hora: Date; n: number; s: number }[]>`
      select hora, sum(tentativas_guardadas)::int as n, sum(tentativas_com_sucesso_guardadas)::int as s
        from resumo_por_hora group by hora
      having sum(tentativas_guardadas) <> 0 or sum(tentativas_com_sucesso_guardadas) <> 0 order by hora`,
  ]);
  expect(fatias).toEqual(real);
  // 30 at the first attempt, 3 × 30 failures to the error queue, 30 at the second
  const total = real.reduce((soma, h) => soma + h.n, 0);
  expect(total).toBe(30 + 90 + 60);
  expect(real.reduce((soma, h) => soma + h.s, 0)).toBe(60);
  // the same statements' tallies: every attempt is a conclusion or a failure
  const [tallies] = await hub.db.$queryRaw<{ n: number }[]>`
    select (sum(entregas_concluidas) + sum(tentativas_com_falha))::int as n from resumo_por_hora`;
  expect(tallies!.n).toBe(total);
}, 60_000);

// What infra/prometheus/alerts.yml reads of the worker: attempts per destination origin, and readiness.
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

const PASSOS = '20ms,40ms';

let hub: TestHub;
let worker: TestDeliveryWorker;
let bom: Receptor;
let ruim: Receptor;

beforeAll(async () => {
  hub = await createTestHub();
  bom = await iniciarReceptor({ '/ok': (_req, res) => res.writeHead(204).end() });
  ruim = await iniciarReceptor({ '/erro': (_req, res) => res.writeHead(500).end('falhou') });
  worker = await startDeliveryWorkerForTests(hub, { DELIVERY_RETRY_DELAYS: PASSOS });
});
afterAll(async () => {
  await worker?.close();
  if (worker) await deleteTestTopology(hub);
  await bom?.fechar();
  await ruim?.fechar();
  await hub?.close();
});

/** The value of one series of the worker's /metrics (0 when it is not there). */
async function serie(nome: string, rotulos: string): Promise<number> {
  const texto = await (await fetch(`${worker.url}/metrics`)).text();
  const linha = texto.split('\n').find((l) => l.startsWith(`${nome}{${rotulos}`));
  return Number(linha?.split(' ').at(-1) ?? 0);
}

test('When one destination answers 2xx and another 500, then hub_delivery_destination_attempts_total counts each origin by result', async () => {
  const c = await cenario(hub);
  const [boa, ruinosa] = [await c.assinar(bom.url('/ok')), await c.assinar(ruim.url('/erro'), 2)];
  const trabalhos = await c.entregar([boa, ruinosa], { broker: worker.broker });
  for (const [t, fim] of [
    [trabalhos[0]!, 'concluida'],
    [trabalhos[1]!, 'fila_de_erro'],
  ] as const)
    await waitFor(
      async () => (await hub.db.entrega.findUniqueOrThrow({ where: { id: t.entrega_id } })).situacao === fim,
      { timeoutMs: 15_000, what: `${t.entrega_id} ${fim}` },
    );

  const origemBoa = new URL(bom.url('/')).origin;
  const origemRuim = new URL(ruim.url('/')).origin;
  const por = (origem: string, resultado: string) =>
    serie('hub_delivery_destination_attempts_total', `origem="${origem}",resultado="${resultado}"`);
  expect(await por(origemBoa, 'sucesso')).toBe(1);
  expect(await por(origemBoa, 'falha')).toBe(0);
  expect(await por(origemRuim, 'falha')).toBe(2);
  expect(await por(origemRuim, 'sucesso')).toBe(0);
  // the three attempts were claimed and recorded by group-commit statements, each counted
  const escrita = async (nome: string, serie: 'sum' | 'count') => {
    const texto = await (await fetch(`${worker.url}/metrics`)).text();
    const linha = texto
      .split('\n')
      .find((l) => l.startsWith(`hub_group_commit_items_${serie}{`) && l.includes(`escrita="${nome}"`));
    return Number(linha?.split(' ').at(-1) ?? 0);
  };
  for (const nome of ['reivindicacao', 'registro']) {
    expect(await escrita(nome, 'sum')).toBeGreaterThanOrEqual(3);
    expect(await escrita(nome, 'count')).toBeGreaterThanOrEqual(1);
  }
});

test('When the worker is ready, then hub_prontidao is 1 for each of its dependencies', async () => {
  for (const dependencia of ['postgresql', 'rabbitmq', 'chaves'])
    expect(await serie('hub_prontidao', `dependencia="${dependencia}"`)).toBe(1);
});

import path from 'node:path';
import type { Broker } from '@hub/broker';
import { deleteDeliveryTopology, type TrabalhoDeEntrega } from '@hub/contracts';
import { connectTestBroker, type SpawnedService, spawnService, waitFor } from '@hub/testing';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import { cenario, createTestHub, type TestHub } from './delivery-worker.test-support';

/**
 * Fairness across destinations with two real worker processes (main.ts), a real receiver, real
 * PostgreSQL and RabbitMQ: a backlog of thousands of jobs for a slow destination does not hold back
 * jobs for another published after it, nothing is lost when a worker is killed with -9 while the
 * backlog drains from its own queue, and the destination goes back to the shared queue after.
 * Counts and order are asserted, never durations.
 */
const MAIN = path.join(__dirname, 'main.ts');
const LENTAS = 2000;
const RAPIDAS = 100;

function workerEnv(hub: TestHub): NodeJS.ProcessEnv {
  return {
    ...hub.env,
    DELIVERY_WORKER_PORT: '0',
    DELIVERY_RETRY_DELAYS: '20ms,40ms',
    DELIVERY_TIMEOUT: '2s',
    DELIVERY_STOP_TIMEOUT: '2s',
    DELIVERY_PREFETCH: '100',
    DELIVERY_DESTINATION_WAIT: '100ms',
    DELIVERY_DESTINOS_REFRESH: '200ms',
    DELIVERY_ISOLATION_DEFERRALS: '10',
    DELIVERY_ISOLATION_QUIET: '1s',
    DELIVERY_ISOLATION_GRACE: '500ms',
    // A killed worker's claims are taken over by the sweeper once their lease ends.
    DELIVERY_SWEEP_INTERVAL: '500ms',
    DELIVERY_SWEEP_AGE: '1s',
    HUB_SIGNING_KEYS: undefined,
  };
}

async function iniciarWorker(hub: TestHub): Promise<SpawnedService & { url: string }> {
  const service = spawnService(MAIN, workerEnv(hub));
  const url = await service.url('delivery-worker');
  await waitFor(async () => (await fetch(`${url}/saude/prontidao`)).status === 200, {
    timeoutMs: 20_000,
    what: 'the worker ready',
  });
  return Object.assign(service, { url });
}

/** The sum over the workers of one metric (a counter without labels). */
async function somaDaMetrica(workers: { url: string }[], nome: string): Promise<number> {
  let total = 0;
  for (const w of workers) {
    const texto = await (await fetch(`${w.url}/metrics`)).text();
    total += Number(new RegExp(`^${nome}(?:\\{[^}]*\\})? (\\d+)$`, 'm').exec(texto)?.[1] ?? 0);
  }
  return total;
}

const concluidas = (hub: TestHub, ids: string[]) =>
  hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } });

async function destinoDe(hub: TestHub, origem: string, concorrenciaMaxima: number) {
  const agora = new Date();
  return hub.db.destino.upsert({
    where: { origem },
    create: { id: crypto.randomUUID(), origem, concorrenciaMaxima, criadoEm: agora, atualizadoEm: agora },
    update: { concorrenciaMaxima, atualizadoEm: agora },
  });
}

/** `quantidade` deliveries over `porEvento` subscriptions of one receiver path, jobs published to the work queue. */
async function lote(hub: TestHub, broker: Broker, url: string, quantidade: number, porEvento: number) {
  const c = await cenario(hub);
  const assinaturas = [];
  for (let i = 0; i < porEvento; i += 1) assinaturas.push(await c.assinar(`${url}?a=${i}`, 5));
  const trabalhos: TrabalhoDeEntrega[] = [];
  while (trabalhos.length < quantidade) trabalhos.push(...(await c.entregar(assinaturas, { broker })));
  return trabalhos.map((t) => t.entrega_id);
}

describe('delivery workers: fair scheduling across destinations', () => {
  let hub: TestHub;
  let broker: Broker;
  let lento: Receptor;
  let rapido: Receptor;
  /** Which receiver each request reached, in the order they arrived. */
  const chegadas: ('lento' | 'rapido')[] = [];
  const workers: (SpawnedService & { url: string })[] = [];
  let destinoId: string;
  let lentas: string[] = [];
  let rapidas: string[] = [];

  beforeAll(async () => {
    hub = await createTestHub();
    broker = await connectTestBroker('delivery-worker-equidade');
    // A slow subscriber: 50 ms per answer, two at once over every worker (40 a second).
    lento = await iniciarReceptor(
      {
        '/lento': (_req, res) => {
          chegadas.push('lento');
          setTimeout(() => res.writeHead(200).end(), 50);
        },
      },
      '127.0.0.1',
      { guardar: true },
    );
    rapido = await iniciarReceptor({
      '/rapido': (_req, res) => {
        chegadas.push('rapido');
        res.writeHead(204).end();
      },
    });
    destinoId = (await destinoDe(hub, new URL(lento.url('/')).origin, 2)).id;
  });
  afterAll(async () => {
    for (const w of workers) await w.kill();
    await broker?.withChannel((ch) => deleteDeliveryTopology(ch, hub.topologia, [destinoId])).catch(() => undefined);
    await broker?.close();
    await lento?.fechar();
    await rapido?.fechar();
    await hub?.close();
  });

  it('When thousands of jobs for a slow destination are queued before jobs for another, then the other concludes while most of the slow backlog waits in a queue of its own, without cycling through the delay queues', async () => {
    workers.push(...(await Promise.all([iniciarWorker(hub), iniciarWorker(hub)])));
    lentas = await lote(hub, broker, lento.url('/lento'), LENTAS, 20);
    rapidas = await lote(hub, broker, rapido.url('/rapido'), RAPIDAS, 10);

    await waitFor(async () => (await concluidas(hub, rapidas)) === RAPIDAS, {
      timeoutMs: 60_000,
      what: 'every delivery to the fast destination',
    });
    const lentasConcluidas = await concluidas(hub, lentas);
    // In the order requests arrived: every fast one came before most of the slow ones.
    const antesDaUltimaRapida = chegadas.slice(0, chegadas.lastIndexOf('rapido')).filter((c) => c === 'lento').length;
    expect(antesDaUltimaRapida).toBeLessThan(LENTAS / 2);
    expect(lentasConcluidas).toBeLessThan(LENTAS / 2);

    // The slow backlog was forwarded to the destination's own queue, where it waits its turn.
    expect(await hub.db.destino.findUniqueOrThrow({ where: { id: destinoId } })).toMatchObject({
      isolamento: 'isolada',
      isolamentoMotivo: 'acumulo',
    });
    await waitFor(
      async () => (await broker.withChannel((ch) => ch.checkQueue(hub.topologia.filaDeEntregas))).messageCount === 0,
      { what: 'the shared work queue empty' },
    );
    const propria = await broker.withChannel((ch) => ch.checkQueue(hub.topologia.filaDoDestino(destinoId)));
    expect(propria.messageCount).toBeGreaterThan(LENTAS / 2);
    // Jobs were deferred at the limit only until the destination was isolated: far fewer than one per job
    // (without a queue of its own, each slow job goes round a delay queue every time its wait runs out).
    const adiadas = await somaDaMetrica(workers, 'hub_delivery_deferred_total');
    console.log(
      `fairness: ${lentasConcluidas} of ${LENTAS} slow deliveries concluded when the ${RAPIDAS} fast ones were, ` +
        `${antesDaUltimaRapida} slow requests before the last fast one, ${adiadas} deferrals, ${propria.messageCount} slow jobs in their own queue`,
    );
    expect(adiadas).toBeLessThan(LENTAS);
  }, 120_000);

  it('When a worker is killed with -9 while the slow backlog drains from its own queue, then every delivery is concluded exactly once and the subscriber got every webhook-id', async () => {
    // Faster now: 40 at once, twenty per worker (the prefetch of the destination queue follows).
    await destinoDe(hub, new URL(lento.url('/')).origin, 40);
    const agora = await concluidas(hub, lentas);
    await waitFor(async () => (await concluidas(hub, lentas)) >= agora + 300, {
      timeoutMs: 60_000,
      what: 'the backlog draining',
    });
    await workers[0]!.kill();
    await waitFor(async () => (await concluidas(hub, lentas)) === LENTAS, {
      timeoutMs: 90_000,
      what: 'every slow delivery',
    });
    const ids = [...lentas, ...rapidas];
    const linhas = await hub.db.entrega.groupBy({ by: ['situacao'], where: { id: { in: ids } }, _count: true });
    expect(linhas).toEqual([{ situacao: 'concluida', _count: ids.length }]);
    const sucessos = await hub.db.tentativa.groupBy({
      by: ['entregaId'],
      where: { entregaId: { in: ids }, sucesso: true },
      _count: { _all: true },
    });
    expect(sucessos).toHaveLength(ids.length);
    expect(sucessos.filter((s) => s._count._all !== 1)).toEqual([]);
    const recebidas = new Set(lento.de('/lento').map((r) => String(r.cabecalhos['webhook-id'])));
    expect([...recebidas].sort()).toEqual([...lentas].sort());
    console.log(
      `kill -9 while draining: ${lento.de('/lento').length} requests for ${LENTAS} slow deliveries ` +
        `(${lento.de('/lento').length - recebidas.size} duplicates on the wire)`,
    );
  }, 120_000);

  it('When the slow backlog is gone, then the destination goes back to the shared queue and its queue is deleted', async () => {
    await waitFor(
      async () => (await hub.db.destino.findUniqueOrThrow({ where: { id: destinoId } })).isolamento === null,
      { timeoutMs: 40_000, what: 'the destination back in the shared queue' },
    );
    await expect(
      broker.withChannel((ch) => ch.checkQueue(hub.topologia.filaDoDestino(destinoId))),
    ).rejects.toMatchObject({ code: 404 });
    expect(await workers[1]!.stop()).toBe(0);
  }, 60_000);
});

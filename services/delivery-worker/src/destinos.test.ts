import type http from 'node:http';
import type { TrabalhoDeEntrega } from '@hub/contracts';
import { waitFor } from '@hub/testing';
import type { Regras } from './features/destinos/destinos';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import {
  cenario,
  createTestHub,
  deleteTestTopology,
  soltarContando,
  startDeliveryWorkerForTests,
  type TestDeliveryWorker,
  type TestHub,
} from './delivery-worker.test-support';

const REFRESH = '100ms';

const concluidas = (hub: TestHub, ids: string[]) =>
  hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } });

/**
 * What hub-api's subscription creation, PATCH, pausar and retomar write (architecture §4, Destino): the
 * row of an origin. The scenario's subscriptions are inserted directly, so the row may be missing.
 */
async function mudarDestino(
  hub: TestHub,
  origem: string,
  dados: { concorrenciaMaxima?: number; limitePorSegundo?: number | null; pausado?: boolean },
) {
  const agora = new Date();
  await hub.db.destino.upsert({
    where: { origem },
    create: { id: crypto.randomUUID(), origem, criadoEm: agora, atualizadoEm: agora, ...dados },
    update: { ...dados, atualizadoEm: agora },
  });
}

/** Until every worker has read the destination's row and obeys what `vale` checks. */
const obedecida = (workers: TestDeliveryWorker[], origem: string, vale: (r: Regras) => boolean) =>
  waitFor(() => workers.every((w) => vale(w.destinos.regras(origem))), { what: `the workers obeying ${origem}'s row` });

describe('delivery worker: the destinations as operators set them', () => {
  let hub: TestHub;
  let lento: Receptor;
  let rapido: Receptor;
  const presos: http.ServerResponse[] = [];
  const workers: TestDeliveryWorker[] = [];
  const iniciar = async (env: Record<string, string> = {}) => {
    const worker = await startDeliveryWorkerForTests(hub, {
      DELIVERY_DESTINOS_REFRESH: REFRESH,
      DELIVERY_TIMEOUT: '20s',
      DELIVERY_DESTINATION_WAIT: '100ms',
      ...env,
    });
    workers.push(worker);
    return worker;
  };

  /**
   * Two workers and a subscription of the slow receiver (its own URL, by `marca`) whose destination
   * allows 4 POSTs at once: each worker has taken its share, 4 over the 2 consumers of the work queue.
   */
  const doisNoLento = async (marca: string) => {
    const um = await iniciar();
    const dois = await iniciar();
    const c = await cenario(hub);
    const a = await c.assinar(`${lento.url('/lento')}?${marca}=1`, 10);
    const origem = new URL(a.url).origin;
    await mudarDestino(hub, origem, { concorrenciaMaxima: 4 });
    await obedecida([um, dois], origem, (r) => r.concorrencia === 2);
    return { um, c, a, origem };
  };

  beforeAll(async () => {
    hub = await createTestHub();
    lento = await iniciarReceptor({ '/lento': (_req, res) => void presos.push(res) });
    rapido = await iniciarReceptor({ '/rapido': (_req, res) => res.writeHead(204).end() });
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.close();
    for (const res of presos.splice(0)) res.destroy();
  });
  afterAll(async () => {
    await deleteTestTopology(hub).catch(() => undefined);
    await lento?.fechar();
    await rapido?.fechar();
    await hub?.close();
  });

  it('When an operator lowers concorrencia_maxima to 2 while a worker runs, then within seconds at most 2 requests are open at that destination, and another destination is served meanwhile', async () => {
    const worker = await iniciar();
    const c = await cenario(hub);
    const aLenta = await c.assinar(lento.url('/lento'), 10);
    const aRapida = await c.assinar(rapido.url('/rapido'), 10);
    const origem = new URL(aLenta.url).origin;
    await mudarDestino(hub, origem, { concorrenciaMaxima: 2 });
    await obedecida([worker], origem, (r) => r.concorrencia === 2);
    const lentas: TrabalhoDeEntrega[] = [];
    for (let i = 0; i < 8; i += 1) lentas.push(...(await c.entregar([aLenta], { broker: worker.broker })));
    const rapidas: TrabalhoDeEntrega[] = [];
    for (let i = 0; i < 10; i += 1) rapidas.push(...(await c.entregar([aRapida], { broker: worker.broker })));
    await waitFor(
      async () =>
        (await concluidas(
          hub,
          rapidas.map((t) => t.entrega_id),
        )) === rapidas.length,
      {
        timeoutMs: 15_000,
        what: 'the fast destination served',
      },
    );
    await waitFor(() => presos.length >= 2, { what: 'the slow destination holding its two' });
    expect(lento.abertos()).toBe(2);

    const maximo = await soltarContando(lento, presos, () =>
      waitFor(
        async () =>
          (await concluidas(
            hub,
            lentas.map((t) => t.entrega_id),
          )) === lentas.length,
        {
          timeoutMs: 20_000,
          what: 'the slow destination served once released',
        },
      ),
    );
    expect(maximo).toBeLessThanOrEqual(2);
  });

  it('When a destination is paused, then no request reaches it, its jobs rest still in a queue of its own and its deliveries stay pendente with no attempt; when resumed, each is delivered once', async () => {
    const worker = await iniciar();
    const c = await cenario(hub);
    const a = await c.assinar(`${rapido.url('/rapido')}?pausa=1`, 3);
    const origem = new URL(a.url).origin;
    await mudarDestino(hub, origem, { pausado: true });
    await obedecida([worker], origem, (r) => r.pausado);
    const antes = rapido.de('/rapido').length;
    const trabalhos = [];
    for (let i = 0; i < 5; i += 1) trabalhos.push(...(await c.entregar([a], { broker: worker.broker })));
    const ids = trabalhos.map((t) => t.entrega_id);
    const metrica = async (nome: RegExp) =>
      Number((await (await fetch(`${worker.url}/metrics`)).text()).match(nome)?.[1] ?? 0);
    const leituras = () => metrica(/^hub_delivery_destination_reads_total(?:\{[^}]*\})? (\d+)$/m);
    // The first job isolated the destination; every job went on to its queue, which nobody consumes while paused.
    const destino = await hub.db.destino.findUniqueOrThrow({ where: { origem } });
    const fila = hub.topologia.filaDoDestino(destino.id);
    const profundidade = () => worker.broker.withChannel((ch) => ch.checkQueue(fila));
    await waitFor(async () => (await profundidade().catch(() => undefined))?.messageCount === 5, {
      what: 'the jobs resting in the destination queue',
    });
    expect(await hub.db.destino.findUniqueOrThrow({ where: { origem } })).toMatchObject({
      isolamento: 'isolada',
      isolamentoMotivo: 'retida',
    });
    // Three passes over the destinations later they have not moved: no job came round a delay queue.
    const lidas = await leituras();
    await waitFor(async () => (await leituras()) >= lidas + 3, { what: 'three more passes' });
    expect(await profundidade()).toMatchObject({ messageCount: 5, consumerCount: 0 });
    expect(await metrica(/hub_delivery_jobs_total\{desfecho="pausado"[^}]*\} (\d+)/)).toBe(0);
    expect(await metrica(/hub_delivery_jobs_total\{desfecho="encaminhado"[^}]*\} (\d+)/)).toBe(5);
    expect(rapido.de('/rapido').length).toBe(antes);
    expect(await hub.db.tentativa.count({ where: { entregaId: { in: ids } } })).toBe(0);
    const situacoes = await hub.db.entrega.findMany({ where: { id: { in: ids } }, select: { situacao: true } });
    expect(situacoes.map((e) => e.situacao)).toEqual(Array(5).fill('pendente'));

    await mudarDestino(hub, origem, { pausado: false });
    await waitFor(async () => (await concluidas(hub, ids)) === ids.length, {
      timeoutMs: 15_000,
      what: 'every delivery once resumed',
    });
    expect(await hub.db.tentativa.count({ where: { entregaId: { in: ids } } })).toBe(5);
  });

  it('When limite_por_segundo is 5, then requests to that destination start at most 5 in any second (one second of burst), and all are delivered', async () => {
    const chegadas: number[] = [];
    const ritmado = await iniciarReceptor({
      '/ritmo': (_req, res) => {
        chegadas.push(performance.now());
        res.writeHead(204).end();
      },
    });
    try {
      const worker = await iniciar();
      const c = await cenario(hub);
      const a = await c.assinar(ritmado.url('/ritmo'), 3);
      const origem = new URL(a.url).origin;
      await mudarDestino(hub, origem, { limitePorSegundo: 5 });
      await obedecida([worker], origem, (r) => r.porSegundo === 5);
      const trabalhos = [];
      for (let i = 0; i < 20; i += 1) trabalhos.push(...(await c.entregar([a], { broker: worker.broker })));
      const ids = trabalhos.map((t) => t.entrega_id);
      await waitFor(async () => (await concluidas(hub, ids)) === ids.length, {
        timeoutMs: 20_000,
        what: 'every delivery at its pace',
      });
      // A bucket of one second: 5 at once after a quiet spell, then one every 200 ms; a second's window
      // holds the 5 and 5 more at most (one more for the window's edges and the clock's grain).
      const maisNumSegundo = Math.max(...chegadas.map((t) => chegadas.filter((u) => u >= t && u < t + 1000).length));
      expect(maisNumSegundo).toBeLessThanOrEqual(11);
      // 20 requests, 5 of them at once, the other 15 at 5 a second.
      expect(chegadas.at(-1)! - chegadas[0]!).toBeGreaterThanOrEqual(2_500);
    } finally {
      await ritmado.fechar();
    }
  });

  it('When attempts are made, then their destination minute holds their count, failures and durations', async () => {
    const falho = await iniciarReceptor({ '/falha': (_req, res) => res.writeHead(500).end() });
    try {
      const worker = await iniciar();
      const c = await cenario(hub);
      const a = await c.assinar(falho.url('/falha'), 2);
      const trabalhos = [];
      for (let i = 0; i < 3; i += 1) trabalhos.push(...(await c.entregar([a], { broker: worker.broker })));
      const origem = new URL(a.url).origin;
      const figuras = () =>
        hub.db.$queryRaw<{ tentativas: number; falhas: number; duracoes: number }[]>`
          select sum(m.tentativas)::int as tentativas, sum(m.falhas)::int as falhas,
                 sum((select sum(x) from unnest(m.duracoes) x))::int as duracoes
            from destino_minuto m join destino d on d.id = m.destino_id where d.origem = ${origem}`;
      await waitFor(async () => (await figuras())[0]?.tentativas === 6, {
        timeoutMs: 15_000,
        what: 'six attempts (3 deliveries × 2) counted',
      });
      expect((await figuras())[0]).toEqual({ tentativas: 6, falhas: 6, duracoes: 6 });
    } finally {
      await falho.fechar();
    }
  });

  it('When two workers share a destination whose concorrencia_maxima is 4, then together they keep at most 4 requests open there', async () => {
    const { um, c, a } = await doisNoLento('dois');
    const trabalhos = [];
    for (let i = 0; i < 16; i += 1) trabalhos.push(...(await c.entregar([a], { broker: um.broker })));
    const ids = trabalhos.map((t) => t.entrega_id);
    await waitFor(() => presos.length >= 4, { what: 'four requests open' });
    const maximo = await soltarContando(lento, presos, () =>
      waitFor(async () => (await concluidas(hub, ids)) === ids.length, {
        timeoutMs: 20_000,
        what: 'every delivery',
      }),
    );
    expect(maximo).toBeLessThanOrEqual(4);
  });

  it('When two workers hold requests to a destination, then each reports its attempts in flight there (what GET /destino sums), zero once answered, and a stopped worker takes its report back', async () => {
    const { um, c, a, origem } = await doisNoLento('relato');
    const { id: destinoId } = await hub.db.destino.findUniqueOrThrow({ where: { origem } });
    const relatos = () =>
      hub.db.destinoEmAndamento.findMany({
        where: { destinoId, validoAte: { gt: new Date() } },
        orderBy: { processo: 'asc' },
      });
    const trabalhos = [];
    for (let i = 0; i < 4; i += 1) trabalhos.push(...(await c.entregar([a], { broker: um.broker })));
    await waitFor(() => presos.length >= 4, { what: 'four requests open' });
    await waitFor(async () => ((await relatos()).map((r) => r.emAndamento).join() === '2,2' ? true : undefined), {
      what: 'each worker reporting its two requests',
    });

    for (const res of presos.splice(0)) res.writeHead(204).end();
    const ids = trabalhos.map((t) => t.entrega_id);
    await waitFor(async () => (await concluidas(hub, ids)) === ids.length, { what: 'every delivery' });
    await waitFor(async () => ((await relatos()).map((r) => r.emAndamento).join() === '0,0' ? true : undefined), {
      what: 'both reports back to zero',
    });

    await workers.splice(workers.indexOf(um), 1)[0]!.close();
    expect(await hub.db.destinoEmAndamento.count({ where: { destinoId } })).toBe(1);
  });
});

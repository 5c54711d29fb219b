import type http from 'node:http';
import { retryQueueName } from '@hub/broker';
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

/**
 * The sweeper never sends again a job that is still travelling (issue 18): a retry held at the head
 * of its delay queue past its own expiry, the jobs of a destination resumed after a long pause.
 * Each test runs the sweeper by hand, again and again, while the job travels.
 */
const PASSOS = '2s,6s';

/** Answers 429 with Retry-After: `segundos` the first time a webhook-id comes, 200 afterwards. */
function primeiroEspera(segundos: number) {
  const vistos = new Set<string>();
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const id = String(req.headers['webhook-id']);
    if (vistos.has(id)) return res.writeHead(200).end();
    vistos.add(id);
    res.writeHead(429, { 'retry-after': String(segundos) }).end();
  };
}

describe('delivery worker: the sweeper and jobs still travelling', () => {
  let hub: TestHub;
  let receptor: Receptor;
  let pausa: Receptor;
  let worker: TestDeliveryWorker;

  beforeAll(async () => {
    hub = await createTestHub();
    receptor = await iniciarReceptor({ '/longo': primeiroEspera(6), '/curto': primeiroEspera(4) });
    pausa = await iniciarReceptor({
      '/pausa': (_req, res) => res.writeHead(200).end(),
      '/circuito': (_req, res) => res.writeHead(200).end(),
    });
    worker = await startDeliveryWorkerForTests(hub, {
      DELIVERY_RETRY_DELAYS: PASSOS,
      DELIVERY_SWEEP_AGE: '1s',
      DELIVERY_DESTINOS_REFRESH: '100ms',
    });
  });
  afterAll(async () => {
    await worker?.close();
    if (worker) await deleteTestTopology(hub);
    await receptor?.fechar();
    await pausa?.fechar();
    await hub?.close();
  });

  /** Runs sweeper passes until `ate` holds; gives how many jobs they sent again. */
  async function varrerAte(ate: () => Promise<boolean>, what: string): Promise<number> {
    let enviadas = 0;
    await waitFor(
      async () => {
        enviadas += await worker.varredura.runNow();
        return ate();
      },
      { timeoutMs: 20_000, intervalMs: 50, what },
    );
    return enviadas;
  }

  const tentativas = (id: string) => hub.db.tentativa.count({ where: { entregaId: id } });

  it('When a retry waits at the head of its delay queue behind a longer one, past its own expiry, then the sweeper does not send it again and it is attempted once when it is back', async () => {
    const c = await cenario(hub);
    const longa = await c.assinar(receptor.url('/longo'), 5);
    const curta = await c.assinar(receptor.url('/curto'), 5);
    // First in the 6 s queue: a retry that expires after the whole step (Retry-After: 6).
    const [frente] = await c.entregar([longa], { broker: worker.broker });
    const filaDe6s = retryQueueName(6000);
    await waitFor(async () => (await worker.broker.withChannel((ch) => ch.checkQueue(filaDe6s))).messageCount === 1, {
      what: 'the long retry in the 6 s queue',
    });
    // Behind it, a retry due after 4 s (Retry-After: 4, in the 6 s step that holds it): it can only
    // leave when the one ahead does, about two seconds after its proxima_tentativa_em.
    const [atras] = await c.entregar([curta], { broker: worker.broker });
    const id = atras!.entrega_id;
    await waitFor(async () => (await tentativas(id)) === 1, { what: 'the first attempt of the one behind' });

    const enviadas = await varrerAte(
      async () => (await hub.db.entrega.findUniqueOrThrow({ where: { id } })).situacao === 'concluida',
      'the one behind concluida',
    );
    expect(enviadas).toBe(0);
    expect(await tentativas(id)).toBe(2);
    expect(receptor.de('/curto').filter((r) => r.cabecalhos['webhook-id'] === id)).toHaveLength(2);
    await waitFor(
      async () =>
        (await hub.db.entrega.findUniqueOrThrow({ where: { id: frente!.entrega_id } })).situacao === 'concluida',
    );
  });

  it('When a destination is resumed after a pause longer than the sweep age, then the sweeper leaves its deliveries to their jobs coming back from the pause, and each is attempted once', async () => {
    const c = await cenario(hub);
    const assinatura = await c.assinar(pausa.url('/pausa'), 3);
    const origem = new URL(assinatura.url).origin;
    const agora = new Date();
    const destino = await hub.db.destino.upsert({
      where: { origem },
      create: { id: crypto.randomUUID(), origem, pausado: true, criadoEm: agora, atualizadoEm: agora },
      update: { pausado: true, atualizadoEm: agora },
    });
    await waitFor(() => worker.destinos.regras(origem).pausado, { what: 'the worker obeying the pause' });
    const trabalhos = [
      ...(await c.entregar([assinatura], { broker: worker.broker })),
      ...(await c.entregar([assinatura], { broker: worker.broker })),
    ];
    const ids = trabalhos.map((t) => t.entrega_id);
    // Paused well past the sweep age: the jobs rest in the destination's own queue, untouched.
    const pausadas = await varrerAte(
      async () => Date.now() - agora.getTime() > 2_000 && worker.destinos.regras(origem).pausado,
      'a long pause',
    );
    expect(pausadas).toBe(0);
    expect(pausa.recebidos).toHaveLength(0);

    // What hub-api's POST /destino/{id}/retomar writes.
    await hub.db.destino.update({ where: { id: destino.id }, data: { pausado: false, retomadoEm: new Date() } });
    const enviadas = await varrerAte(
      async () => (await hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } })) === ids.length,
      'every delivery concluida after the resume',
    );
    expect(enviadas).toBe(0);
    for (const id of ids) expect(await tentativas(id)).toBe(1);
    expect(pausa.recebidos).toHaveLength(ids.length);
  });

  it('When a destination has a queue of its own, then the sweeper leaves its deliveries waiting there alone, but takes over a claim whose worker died', async () => {
    const propria = await iniciarReceptor({ '/propria': (_req, res) => res.writeHead(200).end() });
    try {
      const c = await cenario(hub);
      const assinatura = await c.assinar(propria.url('/propria'), 3);
      const origem = new URL(assinatura.url).origin;
      // Isolated by a pause (its first job), then resumed: it keeps its queue until it stays quiet.
      const agora = new Date();
      const destino = await hub.db.destino.upsert({
        where: { origem },
        create: { id: crypto.randomUUID(), origem, pausado: true, criadoEm: agora, atualizadoEm: agora },
        update: { pausado: true, atualizadoEm: agora },
      });
      await waitFor(() => worker.destinos.regras(origem).pausado, { what: 'the worker obeying the pause' });
      const [primeiro] = await c.entregar([assinatura], { broker: worker.broker });
      await waitFor(() => worker.isolamento.rotaDe(origem) !== undefined, { what: 'the destination isolated' });
      await hub.db.destino.update({ where: { id: destino.id }, data: { pausado: false, retomadoEm: new Date(0) } });
      await waitFor(
        async () =>
          (await hub.db.entrega.findUniqueOrThrow({ where: { id: primeiro!.entrega_id } })).situacao === 'concluida',
        { what: 'the first delivery' },
      );

      // Long overdue: one waiting (its job behind the backlog of its queue), one claimed by a worker that died.
      const [esperando, morta] = await c.entregar([assinatura, assinatura], { publicar: false });
      await hub.db.$executeRaw`
        update entrega set proxima_tentativa_em = now() - interval '1 hour' where id = ${esperando!.entrega_id}::uuid`;
      await hub.db.$executeRaw`
        update entrega set situacao = 'em_andamento', reivindicacao = gen_random_uuid(),
               reivindicada_ate = now() - interval '1 hour', proxima_tentativa_em = now() - interval '1 hour'
         where id = ${morta!.entrega_id}::uuid`;
      expect(await worker.varredura.runNow()).toBe(1);
      await waitFor(
        async () =>
          (await hub.db.entrega.findUniqueOrThrow({ where: { id: morta!.entrega_id } })).situacao === 'concluida',
        { what: "the dead worker's delivery taken over" },
      );
      expect(await worker.varredura.runNow()).toBe(0);
      expect((await hub.db.entrega.findUniqueOrThrow({ where: { id: esperando!.entrega_id } })).situacao).toBe(
        'pendente',
      );
    } finally {
      await propria.fechar();
    }
  });

  it("When a destination's circuit stays open longer than the sweep age, then the sweeper leaves its deliveries to their held jobs; closed by hand, each is attempted once", async () => {
    const c = await cenario(hub);
    const assinatura = await c.assinar(`${pausa.url('/circuito')}?circuito=1`, 3);
    const origem = new URL(assinatura.url).origin;
    const agora = new Date();
    // What the workers wrote when a probe failed a minute ago and opened the circuit for ten minutes
    // (opened long before the sweep age: only its state keeps the sweeper off).
    const aberto = {
      circuito: 'aberto',
      circuitoDesde: new Date(agora.getTime() - 60_000),
      circuitoAberturas: 1,
      circuitoAbertoAte: new Date(agora.getTime() + 540_000),
    };
    const destino = await hub.db.destino.upsert({
      where: { origem },
      create: { id: crypto.randomUUID(), origem, criadoEm: agora, atualizadoEm: agora, ...aberto },
      update: { pausado: false, ...aberto },
    });
    await waitFor(() => worker.destinos.regras(origem).circuito === 'aberto', {
      what: 'the worker obeying the open circuit',
    });
    const trabalhos = [
      ...(await c.entregar([assinatura], { broker: worker.broker })),
      ...(await c.entregar([assinatura], { broker: worker.broker })),
    ];
    const ids = trabalhos.map((t) => t.entrega_id);
    const antes = pausa.de('/circuito').length;
    const retidas = await varrerAte(
      async () => Date.now() - agora.getTime() > 2_000 && worker.destinos.regras(origem).circuito === 'aberto',
      'a long opening',
    );
    expect(retidas).toBe(0);
    expect(pausa.de('/circuito')).toHaveLength(antes);

    // What hub-api's POST /destino/{id}/fechar-circuito writes.
    await hub.db.destino.update({
      where: { id: destino.id },
      data: { circuito: 'fechado', circuitoDesde: new Date(), circuitoAberturas: 0, circuitoAbertoAte: null },
    });
    const enviadas = await varrerAte(
      async () => (await hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } })) === ids.length,
      'every delivery concluida after the close',
    );
    expect(enviadas).toBe(0);
    for (const id of ids) expect(await tentativas(id)).toBe(1);
  });
});

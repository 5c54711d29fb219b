import type http from 'node:http';
import { declareDeliveryTopology, type TrabalhoDeEntrega } from '@hub/contracts';
import { connectTestBroker, waitFor } from '@hub/testing';
import { iniciarReceptor, type Receptor } from './receptor';
import {
  cenario,
  createTestHub,
  deleteTestTopology,
  soltarContando,
  startDeliveryWorkerForTests,
  type TestDeliveryWorker,
  type TestHub,
} from './testing';

const PASSOS_MS = [20, 40];
const concluidas = (hub: TestHub, ids: string[]) =>
  hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } });

describe('delivery worker: destinations and workers side by side', () => {
  let hub: TestHub;
  let lento: Receptor;
  let rapido: Receptor;
  const presos: http.ServerResponse[] = [];
  const workers: TestDeliveryWorker[] = [];

  beforeAll(async () => {
    hub = await createTestHub();
    lento = await iniciarReceptor({
      '/lento': (_req, res) => {
        presos.push(res);
      },
    });
    rapido = await iniciarReceptor({ '/rapido': (_req, res) => res.writeHead(204).end() });
  });
  afterAll(async () => {
    for (const w of workers) await w.close();
    if (workers[0]) await deleteTestTopology(hub, PASSOS_MS);
    await lento?.fechar();
    await rapido?.fechar();
    await hub?.close();
  });

  it('When one destination is stuck, then at most DELIVERY_CONCURRENCY_PER_DESTINATION requests wait on it and the other destination is served meanwhile, even with its jobs ahead in the queue', async () => {
    const worker = await startDeliveryWorkerForTests(hub, {
      DELIVERY_CONCURRENCY_PER_DESTINATION: '2',
      DELIVERY_TIMEOUT: '20s',
      // A prefetch the stuck destination's jobs alone would fill, were they held until their turn.
      DELIVERY_PREFETCH: '4',
      DELIVERY_DESTINATION_WAIT: '100ms',
    });
    workers.push(worker);
    const c = await cenario(hub);
    const aLenta = await c.assinar(lento.url('/lento'), 10);
    const aRapida = await c.assinar(rapido.url('/rapido'), 10);
    const lentas: TrabalhoDeEntrega[] = [];
    for (let i = 0; i < 8; i += 1) lentas.push(...(await c.entregar([aLenta], { broker: worker.broker })));
    const rapidas: TrabalhoDeEntrega[] = [];
    for (let i = 0; i < 20; i += 1) rapidas.push(...(await c.entregar([aRapida], { broker: worker.broker })));

    await waitFor(
      async () =>
        (await concluidas(
          hub,
          rapidas.map((t) => t.entrega_id),
        )) === rapidas.length,
      {
        timeoutMs: 15_000,
        what: 'every delivery to the fast destination',
      },
    );
    // The slow destination holds exactly its limit: two requests open, none answered.
    expect(presos).toHaveLength(2);
    expect(lento.abertos()).toBe(2);
    expect(
      await concluidas(
        hub,
        lentas.map((t) => t.entrega_id),
      ),
    ).toBe(0);

    // Released, it gets every delivery, never more than two at once.
    const maximo = await soltarContando(lento, presos, () =>
      waitFor(
        async () =>
          (await concluidas(
            hub,
            lentas.map((t) => t.entrega_id),
          )) === lentas.length,
        {
          timeoutMs: 15_000,
          what: 'every delivery to the slow destination once released',
        },
      ),
    );
    expect(maximo).toBeLessThanOrEqual(2);
    // Jobs that waited too long went through the shortest delay queue: no attempt was counted for them.
    const tentativas = await hub.db.tentativa.count({ where: { entregaId: { in: lentas.map((t) => t.entrega_id) } } });
    expect(tentativas).toBe(lentas.length);
  });

  it('When two workers take jobs from one queue, duplicates included, then no delivery is completed twice as state', async () => {
    workers.push(await startDeliveryWorkerForTests(hub));
    const [um, dois] = workers;
    const c = await cenario(hub);
    const assinaturas = [];
    for (let i = 0; i < 5; i += 1) assinaturas.push(await c.assinar(`${rapido.url('/rapido')}?a=${i}`, 3));
    const trabalhos = [];
    for (let i = 0; i < 20; i += 1) trabalhos.push(...(await c.entregar(assinaturas, { broker: um!.broker })));
    // Every job on the wire twice, as a redelivery after a crash or a sweep would make it.
    await Promise.all(trabalhos.map((t) => c.republicar(t, dois!.broker)));
    const ids = trabalhos.map((t) => t.entrega_id);
    await waitFor(async () => (await concluidas(hub, ids)) === ids.length, {
      timeoutMs: 20_000,
      what: 'all concluida',
    });
    await waitFor(
      async () =>
        (await um!.broker.withChannel((ch) => ch.checkQueue(hub.topologia.filaDeEntregas))).messageCount === 0,
    );
    const sucessos = await hub.db.tentativa.groupBy({
      by: ['entregaId'],
      where: { entregaId: { in: ids }, sucesso: true },
      _count: { _all: true },
    });
    expect(sucessos).toHaveLength(ids.length);
    expect(sucessos.every((s) => s._count._all === 1)).toBe(true);
    const linhas = await hub.db.entrega.findMany({ where: { id: { in: ids } } });
    expect(linhas.every((l) => l.quantidadeDeTentativas === 1 && l.situacao === 'concluida')).toBe(true);
  });
});

describe('delivery worker: the sweeper', () => {
  let hub: TestHub;
  let receptor: Receptor;
  let worker: TestDeliveryWorker | undefined;

  beforeAll(async () => {
    hub = await createTestHub();
    receptor = await iniciarReceptor({ '/ok': (_req, res) => res.writeHead(200).end() });
  });
  afterAll(async () => {
    await worker?.close();
    if (worker) await deleteTestTopology(hub, PASSOS_MS);
    await receptor?.fechar();
    await hub?.close();
  });

  it('When a job is deleted from the queue by hand, then the sweeper enqueues it again from the database and it is delivered', async () => {
    const broker = await connectTestBroker('varredura');
    try {
      await broker.declare((ch) => declareDeliveryTopology(ch, PASSOS_MS, hub.topologia));
      const c = await cenario(hub);
      const assinatura = await c.assinar(receptor.url('/ok'));
      await c.entregar([assinatura], { broker, dados: '{"n": 1.50, "z": [true, null]}' });
      await broker.withChannel((ch) => ch.purgeQueue(hub.topologia.filaDeEntregas));
    } finally {
      await broker.close();
    }
    const [perdida] = await hub.db.entrega.findMany({ where: { situacao: 'pendente' } });
    worker = await startDeliveryWorkerForTests(hub, { DELIVERY_SWEEP_AGE: '0ms' });
    // The worker took nothing: the job is gone.
    expect((await hub.db.entrega.findUniqueOrThrow({ where: { id: perdida!.id } })).situacao).toBe('pendente');
    expect(await worker.varredura.passar()).toBe(1);
    await waitFor(
      async () => (await hub.db.entrega.findUniqueOrThrow({ where: { id: perdida!.id } })).situacao === 'concluida',
    );
    const [pedido] = receptor.de('/ok');
    // Rebuilt from the database as publication builds it: dados as the publisher wrote them.
    expect(JSON.parse(pedido!.corpo)).toMatchObject({ tipo: expect.any(String), versao_do_esquema: 1 });
    expect(pedido!.corpo.endsWith(',"dados":{"n": 1.50, "z": [true, null]}}')).toBe(true);
    expect(pedido!.cabecalhos['webhook-id']).toBe(perdida!.id);
    // Stamped when sent again: a second pass right after finds nothing to send.
    expect(await worker.varredura.passar()).toBe(0);
  });

  it('When a delivery stays em_andamento with no worker on it (its worker died), then the sweeper sends its job again', async () => {
    const c = await cenario(hub);
    const assinatura = await c.assinar(`${receptor.url('/ok')}?orfa`);
    const [trabalho] = await c.entregar([assinatura], { publicar: false });
    // As a worker killed mid-attempt leaves it: claimed an hour ago, its job lost with the worker.
    await hub.db.entrega.update({
      where: { id: trabalho!.entrega_id },
      data: { situacao: 'em_andamento', atualizadaEm: new Date(Date.now() - 3_600_000) },
    });
    expect(await worker!.varredura.passar()).toBe(1);
    await waitFor(
      async () =>
        (await hub.db.entrega.findUniqueOrThrow({ where: { id: trabalho!.entrega_id } })).situacao === 'concluida',
    );
    expect(await hub.db.tentativa.count({ where: { entregaId: trabalho!.entrega_id } })).toBe(1);
  });
});

describe('delivery worker: destination safety outside LOCALHOST', () => {
  let hub: TestHub;
  let receptor: Receptor;
  let worker: TestDeliveryWorker;

  beforeAll(async () => {
    hub = await createTestHub();
    receptor = await iniciarReceptor({ '/ok': (_req, res) => res.writeHead(200).end() });
    worker = await startDeliveryWorkerForTests(hub, {
      HUB_AMBIENTE: 'SANDBOX',
      RABBITMQ_URL: process.env.RABBITMQ_URL!,
    });
  });
  afterAll(async () => {
    await worker?.close();
    if (worker) await deleteTestTopology(hub, PASSOS_MS);
    await receptor?.fechar();
    await hub?.close();
  });

  it('When a destination is, or resolves to, a loopback address in SANDBOX, then nothing is sent and the attempt fails as destino_proibido', async () => {
    const c = await cenario(hub);
    const literal = await c.assinar(receptor.url('/ok'), 1);
    const nome = await c.assinar(`http://localhost:${receptor.port}/ok`, 1);
    const trabalhos = await c.entregar([literal, nome], { broker: worker.broker });
    for (const t of trabalhos) {
      await waitFor(
        async () =>
          (await hub.db.entrega.findUniqueOrThrow({ where: { id: t.entrega_id } })).situacao === 'fila_de_erro',
      );
      const [tentativa] = await hub.db.tentativa.findMany({ where: { entregaId: t.entrega_id } });
      expect(tentativa).toMatchObject({ statusHttp: null, sucesso: false });
      expect(tentativa!.erro).toMatch(/^destino_proibido/);
    }
    expect(receptor.recebidos).toHaveLength(0);
  });

  it('When a subscription moved to a loopback address after its job was written, then the check applies to the address the attempt goes to: nothing is sent and it fails as destino_proibido', async () => {
    const c = await cenario(hub);
    // The job names a public name that does not resolve; the subscription now points at loopback
    // (written straight to the database: hub-api's PATCH refuses it, a stale row or an operator need not).
    const assinatura = await c.assinar('http://destino-antigo.invalid/ok', 1);
    const [trabalho] = await c.entregar([assinatura], { publicar: false });
    await hub.db.assinatura.update({ where: { id: assinatura.id }, data: { urlDeDestino: receptor.url('/ok') } });
    await c.republicar(trabalho!, worker.broker);
    await waitFor(
      async () =>
        (await hub.db.entrega.findUniqueOrThrow({ where: { id: trabalho!.entrega_id } })).situacao === 'fila_de_erro',
    );
    const [tentativa] = await hub.db.tentativa.findMany({ where: { entregaId: trabalho!.entrega_id } });
    expect(tentativa!.erro).toMatch(/^destino_proibido/);
    expect(receptor.recebidos).toHaveLength(0);
  });
});

import dns from 'node:dns';
import type http from 'node:http';
import { declareDeliveryTopology, type TrabalhoDeEntrega } from '@hub/contracts';
import { connectTestBroker, waitFor } from '@hub/testing';
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
    if (workers[0]) await deleteTestTopology(hub);
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
    if (worker) await deleteTestTopology(hub);
    await receptor?.fechar();
    await hub?.close();
  });

  it('When a job is deleted from the queue by hand, then the sweeper enqueues it again from the database and it is delivered', async () => {
    const broker = await connectTestBroker('varredura');
    try {
      await broker.declare((ch) => declareDeliveryTopology(ch, PASSOS_MS, hub.topologia));
      const c = await cenario(hub);
      const assinatura = await c.assinar(receptor.url('/ok'));
      const [trabalho] = await c.entregar([assinatura], { broker, dados: '{"n": 1.50, "z": [true, null]}' });
      await broker.withChannel((ch) => ch.purgeQueue(hub.topologia.filaDeEntregas));
      // A panel's test event: the rebuilt body must still say so.
      await hub.db.evento.update({ where: { id: trabalho!.evento_id }, data: { publicadoPeloEmail: 'p@x.com' } });
    } finally {
      await broker.close();
    }
    const [perdida] = await hub.db.entrega.findMany({ where: { situacao: 'pendente' } });
    worker = await startDeliveryWorkerForTests(hub, { DELIVERY_SWEEP_AGE: '0ms' });
    // The worker took nothing: the job is gone.
    expect((await hub.db.entrega.findUniqueOrThrow({ where: { id: perdida!.id } })).situacao).toBe('pendente');
    expect(await worker.varredura.runNow()).toBe(1);
    await waitFor(
      async () => (await hub.db.entrega.findUniqueOrThrow({ where: { id: perdida!.id } })).situacao === 'concluida',
    );
    const [pedido] = receptor.de('/ok');
    // Rebuilt from the database as publication builds it: dados as the publisher wrote them.
    expect(JSON.parse(pedido!.corpo)).toMatchObject({
      tipo: expect.any(String),
      versao_do_esquema: 1,
      assinatura_id: perdida!.assinaturaId,
      teste: true,
    });
    expect(pedido!.corpo.endsWith(',"dados":{"n": 1.50, "z": [true, null]}}')).toBe(true);
    expect(pedido!.cabecalhos['webhook-id']).toBe(perdida!.id);
    // Stamped when sent again: a second pass right after finds nothing to send.
    expect(await worker.varredura.runNow()).toBe(0);
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
    expect(await worker!.varredura.runNow()).toBe(1);
    await waitFor(
      async () =>
        (await hub.db.entrega.findUniqueOrThrow({ where: { id: trabalho!.entrega_id } })).situacao === 'concluida',
    );
    expect(await hub.db.tentativa.count({ where: { entregaId: trabalho!.entrega_id } })).toBe(1);
  });
});

/** Host names of the tests' own: receptor.interno is 127.0.0.2 (allowed), the others are forbidden. */
const NOMES: Record<string, string> = {
  'receptor.interno': '127.0.0.2',
  'metadados.interno': '169.254.169.254',
  'privado.interno': '10.20.30.40',
};
const nomes = ((host: string, options: object, callback: (...args: unknown[]) => void) => {
  const address = NOMES[host];
  if (!address) return dns.lookup(host, options, callback as never);
  if ((options as { all?: boolean }).all) return callback(null, [{ address, family: 4 }]);
  return callback(null, address, 4);
}) as typeof dns.lookup;

describe('delivery worker: destination safety outside LOCALHOST', () => {
  let hub: TestHub;
  let receptor: Receptor;
  let permitido: Receptor;
  let worker: TestDeliveryWorker;

  beforeAll(async () => {
    hub = await createTestHub();
    receptor = await iniciarReceptor({ '/ok': (_req, res) => res.writeHead(200).end() });
    // On 127.0.0.2, which DESTINATION_ALLOWLIST opens (as an operator opens a closed network).
    permitido = await iniciarReceptor({ '/ok': (_req, res) => res.writeHead(200).end() }, '127.0.0.2');
    worker = await startDeliveryWorkerForTests(
      hub,
      { HUB_AMBIENTE: 'SANDBOX', RABBITMQ_URL: process.env.RABBITMQ_URL!, DESTINATION_ALLOWLIST: '127.0.0.2' },
      { lookup: nomes },
    );
  });
  afterAll(async () => {
    await worker?.close();
    if (worker) await deleteTestTopology(hub);
    await receptor?.fechar();
    await permitido?.fechar();
    await hub?.close();
  });

  /** The attempts and ultimo_erro of deliveries once each is in the error queue. */
  async function falhas(trabalhos: TrabalhoDeEntrega[]) {
    const erros: string[] = [];
    for (const t of trabalhos) {
      await waitFor(
        async () =>
          (await hub.db.entrega.findUniqueOrThrow({ where: { id: t.entrega_id } })).situacao === 'fila_de_erro',
      );
      const entrega = await hub.db.entrega.findUniqueOrThrow({ where: { id: t.entrega_id } });
      const [tentativa] = await hub.db.tentativa.findMany({ where: { entregaId: t.entrega_id } });
      expect(tentativa).toMatchObject({ statusHttp: null, sucesso: false });
      expect(entrega.ultimoErro).toBe(tentativa!.erro);
      erros.push(tentativa!.erro!);
    }
    return erros;
  }

  it('When a host name resolves to a metadata or private address in SANDBOX, then the stored attempt and ultimo_erro say destino_proibido without the address', async () => {
    const c = await cenario(hub);
    const metadados = await c.assinar('https://metadados.interno/latest/meta-data', 1);
    const privado = await c.assinar('https://privado.interno/hook', 1);
    const erros = await falhas(await c.entregar([metadados, privado], { broker: worker.broker }));
    expect(erros).toEqual([
      'destino_proibido: metadados.interno resolves to a non-public address, where deliveries may not go',
      'destino_proibido: privado.interno resolves to a non-public address, where deliveries may not go',
    ]);
  });

  it('When the connection to an allowed host fails, then the stored error names the host, not the address it resolved to', async () => {
    const c = await cenario(hub);
    // Nothing listens on the receiver's port at 127.0.0.2 once it is closed: a refused connection.
    const fechado = await iniciarReceptor({}, '127.0.0.2');
    await fechado.fechar();
    const assinatura = await c.assinar(`http://receptor.interno:${fechado.port}/ok`, 1);
    const [erro] = await falhas(await c.entregar([assinatura], { broker: worker.broker }));
    expect(erro).toMatch(/^ECONNREFUSED: .*receptor\.interno/);
    expect(erro).not.toMatch(/127\.0\.0\.2/);
  });

  it('When an http subscription accepted before https was required points at an allowed address in SANDBOX, then it is delivered', async () => {
    const c = await cenario(hub);
    const assinatura = await c.assinar(`http://receptor.interno:${permitido.port}/ok`, 1);
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    await waitFor(async () => (await concluidas(hub, [trabalho!.entrega_id])) === 1);
    expect(permitido.de('/ok')).toHaveLength(1);
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

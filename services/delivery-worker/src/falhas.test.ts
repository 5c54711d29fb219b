import { execFile } from 'node:child_process';
import type http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Broker } from '@hub/broker';
import { deleteDeliveryTopology, ERROR_QUEUE_HEADERS, type TrabalhoDeEntrega } from '@hub/contracts';
import { connectTestBroker, type SpawnedService, spawnService, waitFor } from '@hub/testing';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import { cenario, createTestHub, startDeliveryWorkerForTests, type TestHub } from './delivery-worker.test-support';

/**
 * Faults of issue 9: the worker process killed with SIGKILL in the middle of a batch, and its
 * broker connection closed by RabbitMQ under load. Real worker processes (main.ts), a real receiver,
 * real PostgreSQL and RabbitMQ; the state in the database is what is asserted.
 */
const MAIN = path.join(__dirname, 'main.ts');
const run = promisify(execFile);

/** A receiver that answers 200 to the first `livres` requests, then holds the rest until released. */
function portao(livres: number) {
  const presos: http.ServerResponse[] = [];
  let restantes = livres;
  let aberto = false;
  return {
    presos,
    comportamento: (_req: http.IncomingMessage, res: http.ServerResponse) => {
      if (aberto || restantes > 0) {
        restantes -= 1;
        res.writeHead(200).end('ok');
      } else presos.push(res);
    },
    /** From now on every request is answered at once; the held ones get `comoSoltar`. */
    abrir(comoSoltar: (res: http.ServerResponse) => void) {
      aberto = true;
      for (const res of presos.splice(0)) comoSoltar(res);
    },
  };
}

function workerEnv(hub: TestHub, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...hub.env,
    DELIVERY_WORKER_PORT: '0',
    DELIVERY_RETRY_DELAYS: '20ms,40ms',
    DELIVERY_TIMEOUT: '2s',
    DELIVERY_STOP_TIMEOUT: '2s',
    DELIVERY_CONCURRENCY_PER_DESTINATION: '50',
    HUB_SIGNING_KEYS: undefined,
    ...extra,
  };
}

async function iniciarWorker(hub: TestHub, extra: Record<string, string> = {}): Promise<SpawnedService> {
  const service = spawnService(MAIN, workerEnv(hub, extra));
  const url = await service.url('delivery-worker');
  await waitFor(async () => (await fetch(`${url}/saude/prontidao`)).status === 200, {
    timeoutMs: 15_000,
    what: 'the worker ready',
  });
  return service;
}

/** `quantidade` deliveries: events to `porEvento` subscriptions of one receiver path, jobs published. */
async function lote(hub: TestHub, broker: Broker, url: string, quantidade: number, porEvento = 10) {
  const c = await cenario(hub);
  const assinaturas = [];
  for (let i = 0; i < porEvento; i += 1) assinaturas.push(await c.assinar(`${url}?a=${i}`, 5));
  const trabalhos: TrabalhoDeEntrega[] = [];
  while (trabalhos.length < quantidade) trabalhos.push(...(await c.entregar(assinaturas, { broker })));
  return trabalhos.map((t) => t.entrega_id);
}

const concluidas = (hub: TestHub, ids: string[]) =>
  hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } });

/** The state asserted after a fault: every delivery concluida, with exactly one successful attempt. */
async function conferirEstado(hub: TestHub, ids: string[]) {
  const linhas = await hub.db.entrega.findMany({ where: { id: { in: ids } }, select: { situacao: true } });
  expect(linhas).toHaveLength(ids.length);
  expect(linhas.filter((l) => l.situacao !== 'concluida')).toEqual([]);
  const sucessos = await hub.db.tentativa.groupBy({
    by: ['entregaId'],
    where: { entregaId: { in: ids }, sucesso: true },
    _count: { _all: true },
  });
  expect(sucessos).toHaveLength(ids.length);
  expect(sucessos.filter((s) => s._count._all !== 1)).toEqual([]);
}

/** Webhook-ids the receiver got, and how many of them it got more than once. */
function noFio(receptor: Receptor, caminho: string) {
  const vezes = new Map<string, number>();
  for (const r of receptor.de(caminho)) {
    const id = String(r.cabecalhos['webhook-id']);
    vezes.set(id, (vezes.get(id) ?? 0) + 1);
  }
  const duplicados = [...vezes.values()].filter((n) => n > 1);
  return {
    ids: [...vezes.keys()].sort(),
    duplicados: duplicados.length,
    envios: receptor.de(caminho).length,
  };
}

interface Conexao {
  /** As close_connection takes it: <rabbit@host.N.N.N>. */
  pid: string;
  /** Its ends, "127.0.0.1:port -> 127.0.0.1:5672". */
  name: string;
}

/** The worker's AMQP connections in this test's virtual host, as RabbitMQ lists them. */
/** The RabbitMQ connections of the worker process `pid` (other test files run workers in the same virtual host). */
async function conexoesDoWorker(pid: number): Promise<Conexao[]> {
  const vhost = decodeURIComponent(new URL(process.env.RABBITMQ_URL!).pathname.slice(1)) || '/';
  const json = await run('rabbitmqctl', [
    '-q',
    'list_connections',
    'name',
    'vhost',
    'client_properties',
    '--formatter',
    'json',
  ]);
  const doWorker = new Set(
    (JSON.parse(json.stdout) as { name: string; vhost: string; client_properties: [string, string, unknown][] }[])
      .filter(
        (c) =>
          c.vhost === vhost &&
          c.client_properties.some(
            ([k, , v]) =>
              k === 'connection_name' && String(v).startsWith('delivery-worker ') && String(v).endsWith(`:${pid}`),
          ),
      )
      .map((c) => c.name),
  );
  // The JSON formatter writes pids in a form close_connection does not read; the table has them right.
  const tabela = await run('rabbitmqctl', ['-q', '--no-table-headers', 'list_connections', 'pid', 'name']);
  return tabela.stdout
    .split('\n')
    .map((linha) => linha.split('\t'))
    .filter(([pid, name]) => pid && name && doWorker.has(name))
    .map(([pid, name]) => ({ pid: pid!, name: name! }));
}

describe('delivery worker: faults', () => {
  let hub: TestHub;
  let receptor: Receptor;
  let broker: Broker;
  const servicos: SpawnedService[] = [];
  const matar = portao(300);
  const matarEspacado = portao(300);
  const fechar = portao(150);

  beforeAll(async () => {
    hub = await createTestHub();
    broker = await connectTestBroker('delivery-worker-falhas');
    receptor = await iniciarReceptor({
      '/matar': matar.comportamento,
      '/matar-espacado': matarEspacado.comportamento,
      '/fechar': fechar.comportamento,
      // Never answered: the worker that POSTs here is killed while it waits.
      '/veneno': () => undefined,
    });
  });
  afterAll(async () => {
    for (const s of servicos) await s.kill();
    await broker?.withChannel((ch) => deleteDeliveryTopology(ch, hub.topologia)).catch(() => undefined);
    await broker?.close();
    await receptor?.fechar();
    await hub?.close();
  });

  /**
   * 1,000 deliveries to `caminho`: 300 answered, then the worker killed with requests held; a new
   * worker (`extra` added to both) must complete every delivery exactly once as state.
   */
  async function matarNoMeio(caminho: string, matar: ReturnType<typeof portao>, extra: Record<string, string> = {}) {
    const primeiro = await iniciarWorker(hub, extra);
    servicos.push(primeiro);
    const ids = await lote(hub, broker, receptor.url(caminho), 1000);
    expect(ids).toHaveLength(1000);

    // 300 answered, then requests under way and held: the batch is half done when the worker dies.
    await waitFor(() => receptor.de(caminho).length >= 300 && matar.presos.length >= 20, {
      timeoutMs: 20_000,
      what: 'the batch under way',
    });
    await primeiro.kill();
    // The killed worker's requests die with it; from now on the receiver answers 200 at once.
    matar.abrir((res) => res.destroy());
    const antes = await concluidas(hub, ids);
    expect(antes).toBeGreaterThan(0);
    expect(antes).toBeLessThan(ids.length);
    expect(await hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'em_andamento' } })).toBeGreaterThan(0);

    // A new process, with a short sweep, recovers what the dead one left em_andamento.
    const segundo = await iniciarWorker(hub, {
      ...extra,
      DELIVERY_SWEEP_INTERVAL: '500ms',
      DELIVERY_SWEEP_AGE: '1s',
      DELIVERY_TIMEOUT: '1s',
    });
    servicos.push(segundo);
    await waitFor(async () => (await concluidas(hub, ids)) === ids.length, {
      timeoutMs: 40_000,
      what: 'all 1,000 deliveries concluida',
    }).catch(async (error) => {
      const porSituacao = await hub.db.entrega.groupBy({ by: ['situacao'], where: { id: { in: ids } }, _count: true });
      console.log(`kill -9 mid-batch, not all concluida: ${JSON.stringify(porSituacao)}`);
      throw error;
    });

    await conferirEstado(hub, ids);
    const fio = noFio(receptor, caminho);
    expect(fio.ids).toEqual([...ids].sort());
    console.log(
      `kill -9 mid-batch: ${antes} of ${ids.length} concluida when killed; ${fio.envios} requests on the wire, ` +
        `${fio.duplicados} webhook-ids received more than once (duplicates on the wire)`,
    );
    expect(await segundo.stop()).toBe(0);
  }

  it('When the worker is killed with SIGKILL in the middle of a batch of 1,000, then a new worker completes every delivery exactly once as state', async () => {
    await matarNoMeio('/matar', matar);
  }, 60_000);

  // The held requests make the destination isolated (its jobs deferred at its limit): the new worker
  // takes them from its own queue, whose prefetch is the destination's share. A record waiting a
  // second there held its slot a second: 10 deliveries a second, and the sweeper's copies of the jobs
  // waiting behind them came faster, so the queue only grew (269 deliveries never sent in 40 s).
  it('When the records are spaced by a second (DELIVERY_RECORD_SPACING) and the worker is killed in the middle of a batch of 1,000, then a new worker still completes every delivery exactly once as state', async () => {
    await matarNoMeio('/matar-espacado', matarEspacado, { DELIVERY_RECORD_SPACING: '1s' });
  }, 60_000);

  it('When RabbitMQ closes the worker connection while 500 deliveries flow, then every delivery ends concluida and nothing is lost', async () => {
    const worker = await iniciarWorker(hub);
    servicos.push(worker);
    const [conexao, ...outras] = await conexoesDoWorker(worker.child.pid!);
    expect(outras).toEqual([]);
    const ids = await lote(hub, broker, receptor.url('/fechar'), 500);

    // Jobs taken and unacknowledged, requests under way, the rest still in the queue.
    await waitFor(() => receptor.de('/fechar').length >= 150 && fechar.presos.length >= 20, {
      timeoutMs: 20_000,
      what: 'the deliveries flowing',
    });
    await run('rabbitmqctl', ['-q', 'close_connection', conexao!.pid, 'fault test']);
    await waitFor(() => /lost RabbitMQ; reconnecting/.test(worker.output()), { what: 'the worker seeing the loss' });
    // The requests under way are answered after the connection went: their acks have no channel left.
    fechar.abrir((res) => res.writeHead(200).end('ok'));

    await waitFor(async () => (await concluidas(hub, ids)) === ids.length, {
      timeoutMs: 40_000,
      what: 'all 500 deliveries concluida',
    }).catch(async (error) => {
      // What was left where, to tell a lost job from a slow one.
      const porSituacao = await hub.db.entrega.groupBy({ by: ['situacao'], where: { id: { in: ids } }, _count: true });
      console.log(`connection closed under load, not all concluida: ${JSON.stringify(porSituacao)}`);
      throw error;
    });
    await conferirEstado(hub, ids);
    const fio = noFio(receptor, '/fechar');
    expect(fio.ids).toEqual([...ids].sort());
    // A new connection took over, and no job is left behind in the queue.
    const depois = await conexoesDoWorker(worker.child.pid!);
    expect(depois.map((c) => c.pid)).not.toContain(conexao!.pid);
    expect(depois).toHaveLength(1);
    await waitFor(
      async () => (await broker.withChannel((ch) => ch.checkQueue(hub.topologia.filaDeEntregas))).messageCount === 0,
      { what: 'the work queue empty' },
    );
    console.log(
      `connection closed under load: ${fio.envios} requests on the wire for ${ids.length} deliveries, ` +
        `${fio.duplicados} webhook-ids received more than once`,
    );
  }, 60_000);

  it('When a job kills its worker every time it is attempted (a poison job), then after DELIVERY_POISON_CLAIMS claims it is dead-lettered once, marked fila_de_erro, and never sent again', async () => {
    const env = {
      DELIVERY_POISON_CLAIMS: '2',
      DELIVERY_SWEEP_INTERVAL: '200ms',
      DELIVERY_SWEEP_AGE: '0ms',
      DELIVERY_DESTINATION_WAIT: '100ms',
      DELIVERY_TIMEOUT: '2s',
    };
    // Only this test's workers take jobs (the earlier tests' would attempt it and time out).
    for (const s of servicos) await s.kill();
    const c = await cenario(hub);
    const assinatura = await c.assinar(receptor.url('/veneno'), 5);
    let id = '';
    const envios = () => receptor.de('/veneno').filter((r) => r.cabecalhos['webhook-id'] === id).length;
    // Each worker claims it (the job, or the sweeper once the dead claim's lease ended), POSTs, dies.
    for (const n of [1, 2]) {
      const worker = await iniciarWorker(hub, env);
      servicos.push(worker);
      if (n === 1) id = (await c.entregar([assinatura], { broker }))[0]!.entrega_id;
      await waitFor(() => envios() === n, { timeoutMs: 20_000, what: `attempt ${n} under way` });
      await worker.kill();
    }
    const terceiro = await iniciarWorker(hub, env);
    servicos.push(terceiro);
    await waitFor(async () => (await hub.db.entrega.findUniqueOrThrow({ where: { id } })).situacao === 'fila_de_erro', {
      timeoutMs: 20_000,
      what: 'the poison job in fila_de_erro',
    });
    expect(await terceiro.stop()).toBe(0);
    const entrega = await hub.db.entrega.findUniqueOrThrow({ where: { id } });
    expect(entrega.ultimoErro).toMatch(/^poison job: its last 2 claims ended with no attempt recorded/);
    expect(envios()).toBe(2);
    const erros = await broker.withChannel(async (ch) => {
      // Read and acked: this test is the file's last.
      const lidas = [];
      for (let m = await ch.get(hub.topologia.filaDeErro); m; m = await ch.get(hub.topologia.filaDeErro)) {
        lidas.push(m);
        ch.ack(m);
      }
      return lidas;
    });
    // (The error queue is the hub's, shared with the other tests of this file.)
    const dela = erros.filter((m) => m.properties.messageId === id);
    expect(dela).toHaveLength(1);
    expect(dela[0]!.properties.headers?.[ERROR_QUEUE_HEADERS.motivo]).toBe('limite_de_entregas');
    // Never again: a sweep, however late, leaves it alone.
    await hub.db.entrega.update({
      where: { id },
      data: { proximaTentativaEm: new Date(0), atualizadaEm: new Date(0) },
    });
    const ultimo = await startDeliveryWorkerForTests(hub, { DELIVERY_SWEEP_AGE: '0ms' });
    try {
      expect(await ultimo.varredura.runNow()).toBe(0);
    } finally {
      await ultimo.close();
    }
    expect(envios()).toBe(2);
  }, 90_000);
});

// The operators' reads while the worker drains: GET /fila and GET /destino on hub-api, each asked
// every 100 ms while one delivery worker drains 20,000 jobs to 4 local receivers (the delivery
// benchmark's load, bench/delivery/worker-throughput.ts), latency per request from this process.
//
//   npx tsx bench/reads/operator-reads-while-draining.ts           BENCH_ENTREGAS (20000)
//
// hub-api, the worker and the receivers (bench/support/subscribers.ts) are processes of their own (under tsx);
// the identity stand-in and the access service (permissions, cached by hub-api) share this process
// with the readers.
import os from 'node:os';
import path from 'node:path';
import { deleteVhost, freshVhost } from '../support/local-infra';
import { semearEntregas } from '../support/seed-delivery-jobs';
import { percentile } from '../support/paced-load';

const N = Number(process.env.BENCH_ENTREGAS ?? 20_000);
const RECEPTORES = 4;
const INTERVALO_MS = 100;
const VHOST = `hub-bench-operadores-${process.pid}`;
const log = (line: string) => process.stdout.write(`${line}\n`);

async function main() {
  if (!freshVhost(VHOST)) throw new Error('rabbitmqctl is needed to make a virtual host for the benchmark');
  process.env.RABBITMQ_URL = `amqp://guest:guest@127.0.0.1:5672/${VHOST}`;
  // After RABBITMQ_URL is set: the test helpers read it when loaded.
  const { cenario, createTestHub } = await import('../../services/delivery-worker/src/delivery-worker.test-support');
  const { connectTestBroker, spawnService, startTestIdentity, waitFor } = await import('../../packages/testing/src');
  const { declareDeliveryTopology, DELIVERY_TOPOLOGY } = await import('../../packages/contracts/src');
  const { startAccessForTests } = await import('../../services/access/src/access.test-support');
  const load = os.loadavg()[0]!.toFixed(2);

  const identity = await startTestIdentity();
  const access = await startAccessForTests(identity);
  // The platform's topology names (the virtual host is this run's own), so hub-api's GET /fila sees the worker's queues.
  const hub = { ...(await createTestHub()), topologia: DELIVERY_TOPOLOGY };
  const { DELIVERY_WORKER_TOPOLOGY_PREFIX: _prefixo, ...hubEnv } = hub.env;
  const broker = await connectTestBroker('bench-operadores');
  const receptores = spawnService(path.join(__dirname, '../support/subscribers.ts'), {
    RECEPTORES: String(RECEPTORES),
  });
  const servicos: { stop(): Promise<number | null> }[] = [receptores];
  try {
    const urls = await Promise.all(Array.from({ length: RECEPTORES }, (_, i) => receptores.url(`receptor-${i}`)));
    await broker.withChannel((ch) => declareDeliveryTopology(ch, [1_000]));
    const total = await semearEntregas(cenario, hub, broker, urls, N);

    const hubApi = spawnService(path.join(__dirname, '../../services/hub-api/src/main.ts'), {
      ...identity.env,
      ...hubEnv,
      ACCESS_URL: access.url,
      HUB_API_PORT: '0',
      DELIVERY_RETRY_DELAYS: '1s',
    });
    servicos.push(hubApi);
    const hubApiUrl = await hubApi.url('hub-api', 60_000);
    const token = await identity.userToken({ email: 'operador@empresa.com.br', master: true });
    const ler = async (rota: string) => {
      const inicio = performance.now();
      const r = await fetch(`${hubApiUrl}${rota}`, { headers: { authorization: `Bearer ${token}` } });
      await r.arrayBuffer();
      if (!r.ok) throw new Error(`${rota} answered ${r.status}`);
      return performance.now() - inicio;
    };
    await ler('/fila');
    await ler('/destino');

    const worker = spawnService(path.join(__dirname, '../../services/delivery-worker/src/main.ts'), {
      ...hubEnv,
      DELIVERY_WORKER_PORT: '0',
      DELIVERY_RETRY_DELAYS: '1s',
      DELIVERY_CONCURRENCY_PER_DESTINATION: '50',
      LOG_LEVEL: 'warn',
    });
    servicos.push(worker);
    const tempos: Record<string, number[]> = { '/fila': [], '/destino': [] };
    let acabou = false;
    const leitores = Object.keys(tempos).map(async (rota) => {
      while (!acabou) {
        const espera = new Promise((r) => setTimeout(r, INTERVALO_MS));
        tempos[rota]!.push(await ler(rota));
        await espera;
      }
    });
    const inicio = Date.now();
    await waitFor(
      async () => ((await hub.db.entrega.count({ where: { situacao: 'concluida' } })) >= total ? true : undefined),
      { timeoutMs: 600_000, intervalMs: 200, what: `${total} deliveries concluded` },
    );
    acabou = true;
    await Promise.all(leitores);
    const segundos = (Date.now() - inicio) / 1000;

    log('');
    log(
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load average before ${load}; ` +
        `${total} deliveries drained in ${segundos.toFixed(1)} s (worker start-up included, ${Math.round(total / segundos)}/s).`,
    );
    log('');
    log('| route | requests | p50 ms | p99 ms | max ms |');
    log('| --- | ---: | ---: | ---: | ---: |');
    for (const [rota, lista] of Object.entries(tempos)) {
      const ordenados = [...lista].sort((a, b) => a - b);
      const f = (v: number) => v.toFixed(1);
      log(
        `| GET ${rota} | ${lista.length} | ${f(percentile(ordenados, 50))} | ${f(percentile(ordenados, 99))} | ${f(ordenados.at(-1)!)} |`,
      );
    }
  } finally {
    await Promise.all(servicos.map((s) => s.stop()));
    await broker.close();
    await hub.close();
    await access.close();
    await identity.close();
    deleteVhost(VHOST);
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});

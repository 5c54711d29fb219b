// Deliveries per second of the delivery worker: N delivery jobs wait in the work queue (seeded as
// publication leaves them: event, deliveries and jobs), then 1 (and then 2) worker processes drain
// them to 4 local receivers that answer 200 at once. Each delivery is claimed, signed (Ed25519,
// node:crypto), POSTed and recorded (attempt, state, tallies) before its ack.
//
//   npx tsx bench/delivery/worker-throughput.ts            BENCH_ENTREGAS (20000), BENCH_WORKERS ("1,2")
//
// The receivers and this script share the machine with the workers (2 CPUs), so the figures are a
// floor. Workers run under tsx, as `pnpm dev` runs them.
import os from 'node:os';
import path from 'node:path';
import { contarCpu, cpuPorUnidade } from '../support/cpu';
import { deleteVhost, freshVhost } from '../support/local-infra';
import { semearEntregas } from '../support/seed-delivery-jobs';

const N = Number(process.env.BENCH_ENTREGAS ?? 20_000);
const WORKERS = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number);
const RECEPTORES = 4;
const VHOST = `hub-bench-entregas-${process.pid}`;
const log = (line: string) => process.stdout.write(`${line}\n`);

async function main() {
  if (!freshVhost(VHOST)) throw new Error('rabbitmqctl is needed to make a virtual host for the benchmark');
  process.env.RABBITMQ_URL = `amqp://guest:guest@127.0.0.1:5672/${VHOST}`;
  // After RABBITMQ_URL is set: the test helpers read it when loaded.
  const { cenario, createTestHub } = await import('../../services/delivery-worker/src/delivery-worker.test-support');
  const { iniciarReceptor } = await import('../../services/delivery-worker/src/receptor.test-support');
  const { connectTestBroker, spawnService, waitFor } = await import('../../packages/testing/src');
  const { declareDeliveryTopology, deleteDeliveryTopology } = await import('../../packages/contracts/src');
  const main = path.join(__dirname, '../../services/delivery-worker/src/main.ts');
  const rows: string[] = [];
  const contas: string[] = [];
  const load = os.loadavg()[0]!.toFixed(2);

  for (const quantos of WORKERS) {
    const hub = await createTestHub();
    const broker = await connectTestBroker('bench-entregas');
    const receptores = await Promise.all(
      Array.from({ length: RECEPTORES }, () => iniciarReceptor({ '/ok': (_req, res) => res.writeHead(200).end() })),
    );
    try {
      await broker.withChannel((ch) => declareDeliveryTopology(ch, [1_000], hub.topologia));
      // 50 POSTs at once per receiver for the worker(s) together (the destination's row; default 10).
      const total = await semearEntregas(
        cenario,
        hub,
        broker,
        receptores.map((r) => r.url('/ok')),
        N,
      );
      const workers = Array.from({ length: quantos }, () =>
        spawnService(main, {
          ...hub.env,
          DELIVERY_WORKER_PORT: '0',
          DELIVERY_RETRY_DELAYS: '1s',
          DELIVERY_CONCURRENCY_PER_DESTINATION: '50',
          LOG_LEVEL: 'warn',
        }),
      );
      const inicio = Date.now();
      const cpu = contarCpu();
      const concluidas = () => hub.db.entrega.count({ where: { situacao: 'concluida' } });
      await waitFor(async () => ((await concluidas()) >= total ? true : undefined), {
        timeoutMs: 600_000,
        intervalMs: 100,
        what: `${total} deliveries concluded`,
      });
      const comPartida = (Date.now() - inicio) / 1000;
      contas.push(
        `${quantos} worker(s): CPU per delivery, by process, from spawn: ${cpuPorUnidade(cpu.fim(), total)}.`,
      );
      // From the first attempt's start to the last one's end: the drain itself, start-up left out.
      const [janela] = await hub.db.$queryRaw<{ segundos: number }[]>`
        select extract(epoch from max(iniciada_em + duracao_ms * interval '1 millisecond') - min(iniciada_em))::float8
               as segundos from tentativa`;
      const segundos = janela!.segundos;
      const tentativas = await hub.db.tentativa.count();
      const recebidas = receptores.reduce((n, r) => n + r.recebidos.length, 0);
      rows.push(
        `| ${quantos} | ${total} | ${comPartida.toFixed(1)} | ${segundos.toFixed(1)} | ${Math.round(total / segundos)} | ${tentativas} | ${recebidas} |`,
      );
      log(rows.at(-1)!);
      await Promise.all(workers.map((w) => w.stop()));
    } finally {
      await broker.withChannel((ch) => deleteDeliveryTopology(ch, hub.topologia)).catch(() => undefined);
      await broker.close();
      await Promise.all(receptores.map((r) => r.fechar()));
      await hub.close();
    }
  }
  deleteVhost(VHOST);
  log('');
  log(`Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load average before ${load}.`);
  log('');
  log(
    '| worker processes | deliveries | s from spawn (start-up included) | s first attempt to last | deliveries/s | attempts | POSTs received |',
  );
  log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const row of rows) log(row);
  log('');
  for (const conta of contas) log(conta);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});

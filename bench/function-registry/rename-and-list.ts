/**
 * Benchmark of the function registry (loopback only, bounded):
 *   1. 5,000 functions and 10,000 collaborators in one of them (the collaborators arrive as real
 *      synchronisation messages through RabbitMQ, sent to the service's own queue of this run so
 *      that the platform's durable queues stay clean; the projection time is reported too);
 *   2. renaming that function: the answer time, then the time until the broker confirmed all
 *      10,000 announcements (outbox relay) and until a bench queue received them all;
 *   3. GET /funcao latency (p50/p99) with autocannon.
 * Run from the root: npx tsx bench/function-registry/rename-and-list.ts
 * It creates its own databases and its own exchange and quorum queue, and removes them at the end.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { encode, quorumQueue } from '../../packages/broker/src';
import { colaboradorSincronizado, eventoDaPlataforma } from '../../packages/contracts/src';
import { withDatabase } from '../../packages/database/src';
import { createLogger } from '../../packages/log/src';
import { connectTestBroker, startTestIdentity, uniqueName, waitFor } from '../../packages/testing/src';
// Access through its public entry (services meet only through those).
import { startAccessForTests } from '../../services/access/src/access.test-support';
import { functionConfig } from '../../services/function/src/config';
import { createDb } from '../../services/function/src/db';
import { startFunction } from '../../services/function/src/start';

type AutocannonResult = Awaited<ReturnType<typeof autocannon>>;

// The services under test log only warnings, so the report is all that reaches stdout.
process.env.LOG_LEVEL ??= 'warn';

const FUNCTIONS = 5_000;
const COLLABORATORS = 10_000;
const RENAMES = 5;
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const ms = (n: number) => Math.round(n * 10) / 10;

async function main() {
  const logger = createLogger('bench-function', 'warn');
  const identity = await startTestIdentity();
  const access = await startAccessForTests(identity);
  const database = `hub_function_bench_${Date.now().toString(36)}`;
  const exchange = uniqueName('bench.function.anuncios');
  const queue = uniqueName('bench.function.anuncios.q');
  const colaboradoresQueue = uniqueName('bench.function.colaboradores');
  let projected = 0;
  const fn = await startFunction(
    functionConfig.parse({
      ...identity.env,
      FUNCTION_DATABASE_URL: withDatabase(ADMIN_URL, database),
      ACCESS_URL: access.url,
    }),
    logger,
    {
      port: 0,
      colaboradoresQueue,
      onColaborador: () => {
        projected += 1;
      },
      destino: { exchange, routingKey: eventoDaPlataforma.routingKey },
    },
  );
  const listener = await connectTestBroker('bench-function-anuncios');
  const received = new Map<string, number>();
  try {
    await listener.withChannel(async (channel) => {
      await channel.assertExchange(exchange, 'topic', { durable: false });
      await channel.assertQueue(queue, quorumQueue()); // persisted like the hub's own queue
      await channel.bindQueue(queue, exchange, '#');
    });
    await listener.consume(
      queue,
      async (message) => {
        const nome = (JSON.parse(message.content.toString('utf8')) as { dados: { funcao: { nome: string } } }).dados
          .funcao.nome;
        received.set(nome, (received.get(nome) ?? 0) + 1);
      },
      { prefetch: 1_000 },
    );

    const master = await access.masterToken();
    const headers = { authorization: `Bearer ${master}`, 'content-type': 'application/json' };
    const call = async (method: string, path: string, body?: unknown) => {
      const started = performance.now();
      const response = await fetch(fn.url + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await response.json()) as Record<string, unknown>;
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
      return { json, elapsed: performance.now() - started };
    };

    await fn.db.$executeRaw`insert into funcao (id, nome, criado_em, atualizado_em)
      select uuid_v7(), 'Função ' || lpad(i::text, 5, '0') || ' ' || left(md5(i::text), 8), now(), now()
        from generate_series(1, ${FUNCTIONS - 1}) as i`;
    const grande = (await call('POST', '/funcao', { nome: 'Função grande' })).json.id as string;
    const pequena = (await call('POST', '/funcao', { nome: 'Aquecimento' })).json.id as string;

    // Straight into the service's own collaborator queue (default exchange): through RabbitMQ and
    // the real consumer, without filling the platform's durable queues with 10,000 bench people.
    const projectionStart = performance.now();
    for (let i = 0; i < COLLABORATORS; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, COLLABORATORS - i) }, (_, j) =>
          fn.broker.publish(
            '',
            colaboradoresQueue,
            encode(colaboradorSincronizado, {
              termoauth_id: `bench-${i + j}`,
              email: `pessoa${i + j}@empresa.com.br`,
              nome: `Pessoa ${i + j}`,
              funcao_id: grande,
              ativo: true,
              removido: false,
              versao: 1,
              ocorrido_em: new Date().toISOString(),
            }),
          ),
        ),
      );
    }
    await waitFor(() => projected >= COLLABORATORS, { timeoutMs: 300_000, intervalMs: 10, what: 'the projection' });
    const projectionMs = performance.now() - projectionStart;
    const counted = (await call('GET', `/funcao/${grande}`)).json.quantidade_de_colaboradores;
    if (counted !== COLLABORATORS) throw new Error(`projection counts ${counted}, not ${COLLABORATORS}`);

    // Warm-up: the first rename pays for connections and query plans.
    await call('PATCH', `/funcao/${pequena}`, { nome: 'Aquecimento 2' });

    const renames: { resposta_ms: number; confirmadas_ms: number; recebidas_ms: number }[] = [];
    for (let round = 1; round <= RENAMES; round += 1) {
      const nome = `Função grande ${round}`;
      const before = fn.relay.stats.publicadas;
      const started = performance.now();
      const { elapsed } = await call('PATCH', `/funcao/${grande}`, { nome });
      await waitFor(() => fn.relay.stats.publicadas - before >= COLLABORATORS, {
        timeoutMs: 120_000,
        intervalMs: 2,
        what: 'confirms',
      });
      const confirmed = performance.now() - started;
      await waitFor(() => (received.get(nome) ?? 0) >= COLLABORATORS, {
        timeoutMs: 120_000,
        intervalMs: 2,
        what: 'the bench queue',
      });
      const consumed = performance.now() - started;
      renames.push({ resposta_ms: ms(elapsed), confirmadas_ms: ms(confirmed), recebidas_ms: ms(consumed) });
    }
    const pending = await fn.db.outbox.count({ where: { publicadoEm: null } });
    const duplicates = [...received.entries()].filter(
      ([nome, n]) => nome.startsWith('Função grande') && n !== COLLABORATORS,
    );

    const lists: Record<string, AutocannonResult> = {};
    for (const [label, path] of [
      ['GET /funcao', '/funcao'],
      ['GET /funcao?busca=grande', '/funcao?busca=grande'],
      ['GET /funcao?pagina=250&tamanho=20', '/funcao?pagina=250&tamanho=20'],
    ] as const) {
      lists[label] = await autocannon({
        url: fn.url + path,
        headers: { authorization: headers.authorization },
        connections: 10,
        duration: 10,
      });
    }

    const report = {
      maquina: `${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}, load average ${loadavg()
        .map((n) => n.toFixed(1))
        .join(' ')}`,
      funcoes: FUNCTIONS,
      colaboradores: COLLABORATORS,
      projecao_de_10000_mensagens_ms: ms(projectionMs),
      renomeacoes: renames,
      outbox_pendente_ao_fim: pending,
      contagens_erradas: duplicates,
      listas: Object.fromEntries(
        Object.entries(lists).map(([label, r]) => [
          label,
          {
            p50_ms: r.latency.p50,
            p99_ms: r.latency.p99,
            media_ms: r.latency.average,
            max_ms: r.latency.max,
            req_s: r.requests.average,
            non2xx: r.non2xx,
            erros: r.errors,
          },
        ]),
      ),
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await listener.withChannel(async (channel) => {
      await channel.deleteQueue(queue);
      await channel.deleteExchange(exchange);
    });
    await listener.close();
    await fn.stop();
    const admin = createDb(ADMIN_URL, 1);
    await admin.$executeRawUnsafe(`drop database if exists "${database}" with (force)`);
    await admin.$disconnect();
    await access.close();
    await identity.close();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);

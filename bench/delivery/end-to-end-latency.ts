// End-to-end latency: from POST /eventos answered (through the gateway) to the first byte of the
// signed delivery at the subscriber, at a steady rate (open loop, evenly spaced), with three
// subscriptions on three local receivers; then the same run with one of the three answering 500
// (a third of the subscribers failing), to see whether the healthy ones stay fast.
//
//   npx tsx bench/delivery/end-to-end-latency.ts        BENCH_RATE (500), BENCH_PACED_DURATION (20 s per run),
//                                    BENCH_JOB_COPY=0: no copy of the jobs (no split at RabbitMQ)
//
// The platform is started by bench/support/platform.ts (start.mjs: every service, the delivery worker
// included, on free ports with databases and a vhost of its own). Receivers run in this process, so
// the answer time and the arrival time are read on one clock (performance.now()).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { pacedLoad, percentile } from '../support/paced-load';
import { contarCpu, cpuPorUnidade } from '../support/cpu';
import { obtainPlatform } from '../support/platform';
import { copiarTrabalhos } from '../support/delivery-job-tap';

const RATE = Number(process.env.BENCH_RATE ?? 500);
const DURATION = Number(process.env.BENCH_PACED_DURATION ?? 20);
const log = (line: string) => process.stdout.write(`${line}\n`);

/** A receiver that notes when each delivery's request began to arrive (its headers parsed). */
async function receptor(status: () => number) {
  const chegadas = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const id = String(req.headers['webhook-id'] ?? '');
    if (!chegadas.has(id)) chegadas.set(id, performance.now());
    req.resume();
    req.on('end', () => res.writeHead(status()).end());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
  return { url, chegadas, fechar: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function call<T>(method: string, url: string, token: string | undefined, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

async function main() {
  const load = os.loadavg()[0]!.toFixed(2);
  const platform = await obtainPlatform(log, { vhost: 'hub-bench-latencia', ownDatabasesOnly: true });
  const falhando = { ligado: false };
  const receptores = [
    await receptor(() => 200),
    await receptor(() => 200),
    await receptor(() => (falhando.ligado ? 500 : 200)),
  ];
  const linhas: string[] = [];
  const contas: string[] = [];
  // Where the time goes: when each job reached RabbitMQ (a copy of it, in this process).
  // BENCH_JOB_COPY=0 leaves it out: the copy costs RabbitMQ a second queue and consumer per job.
  const trabalhos =
    platform.rabbitmqUrl && process.env.BENCH_JOB_COPY !== '0'
      ? await copiarTrabalhos(platform.rabbitmqUrl)
      : undefined;
  try {
    const domain = (process.env.COMPANY_DOMAIN ?? 'empresa.com.br').replace(/^@/, '');
    const run = Date.now().toString(36);
    const { access_token: master } = await call<{ access_token: string }>(
      'POST',
      `${platform.identityUrl}/token`,
      undefined,
      { email: `bench-master@${domain}`, nome: 'Bench', master: true },
    );
    const api = platform.gatewayUrl;
    const aplicativo = (nome: string) =>
      call<{ id: string; client_id: string }>('POST', `${api}/aplicativo`, master, {
        nome,
        client_id: `lat_${nome.toLowerCase().replace(/\W/g, '_')}_${run}`,
      });
    const dono = await aplicativo('Publicador');
    const tipo = await call<{ id: string }>('POST', `${api}/tipo-de-evento`, master, {
      nome: `latencia_${run}.medida`,
      aplicativo_id: dono.id,
    });
    await call('POST', `${api}/versao-de-esquema`, master, {
      tipo_de_evento_id: tipo.id,
      esquema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
    });
    const assinaturas: string[] = [];
    for (const [i, r] of receptores.entries()) {
      const assinante = await aplicativo(`Assinante ${i}`);
      const a = await call<{ id: string }>('POST', `${api}/assinatura`, master, {
        aplicativo_assinante_id: assinante.id,
        tipo_de_evento_id: tipo.id,
        versao_do_esquema: 1,
        url_de_destino: r.url,
      });
      assinaturas.push(a.id);
    }
    const { access_token: token } = await call<{ access_token: string }>(
      'POST',
      `${platform.identityUrl}/token/aplicativo`,
      undefined,
      { client_id: dono.client_id },
    );
    const corpo = JSON.stringify({
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      entidade_id: 'x',
      dados: { n: 1 },
    });

    for (const rodada of ['clean', 'one subscriber of three answers 500'] as const) {
      falhando.ligado = rodada !== 'clean';
      for (const r of receptores) r.chegadas.clear();
      trabalhos?.chegadas.clear();
      /** delivery id → [answer time, subscription index] */
      const respondidas = new Map<string, [number, number]>();
      const cpu = contarCpu();
      const result = await pacedLoad(
        `${api}/eventos`,
        { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        RATE,
        DURATION,
        {
          method: 'POST',
          body: corpo,
          onAnswer: (body, endedAt) => {
            for (const e of (JSON.parse(body) as { entregas: { id: string; assinatura_id: string }[] }).entregas)
              respondidas.set(e.id, [endedAt, assinaturas.indexOf(e.assinatura_id)]);
          },
        },
      );
      contas.push(`${rodada}: CPU per accepted event, by process: ${cpuPorUnidade(cpu.fim(), result.ok)}.`);
      // Let the last deliveries arrive.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const saudaveis: number[] = [];
      const ateAFila: number[] = [];
      const daFila: number[] = [];
      let faltando = 0;
      for (const [id, [respondidaEm, i]] of respondidas) {
        if (falhando.ligado && i === 2) continue;
        const chegada = receptores[i]?.chegadas.get(id);
        if (chegada === undefined) faltando++;
        else saudaveis.push(chegada - respondidaEm);
        const naFila = trabalhos?.chegadas.get(id);
        if (naFila !== undefined && chegada !== undefined) {
          ateAFila.push(naFila - respondidaEm);
          daFila.push(chegada - naFila);
        }
      }
      for (const lista of [saudaveis, ateAFila, daFila]) lista.sort((a, b) => a - b);
      const p50p99 = (lista: number[]) =>
        lista.length ? `${percentile(lista, 50).toFixed(1)} / ${percentile(lista, 99).toFixed(1)}` : 'n/a';
      linhas.push(
        `| ${rodada} | ${result.requestsPerSecond.toFixed(0)} | ${result.ok} | ${result.p99.toFixed(1)} | ${saudaveis.length} | ` +
          `${percentile(saudaveis, 50).toFixed(1)} | ${percentile(saudaveis, 99).toFixed(1)} | ${p50p99(ateAFila)} | ` +
          `${p50p99(daFila)} | ${faltando} |`,
      );
      log(linhas.at(-1)!);
    }
  } finally {
    await trabalhos?.close();
    await Promise.all(receptores.map((r) => r.fechar()));
    await platform.stop();
  }
  log('');
  log(`Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load average before ${load}.`);
  log('');
  log(
    '| run | events/s sent | 201s | POST p99 ms | healthy deliveries | answer → first byte p50 ms | p99 ms | answer → job in RabbitMQ p50 / p99 ms | job → first byte p50 / p99 ms | not arrived within 5 s of the end |',
  );
  log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const linha of linhas) log(linha);
  log('');
  for (const conta of contas) log(conta);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});

// Tracing's CPU per event (issue 21): the same load with OpenTelemetry off (no exporter: only the
// trace context travels) and on (OTEL_EXPORTER_OTLP_ENDPOINT: every span of gateway, hub-api and the
// worker exported to an OTLP/HTTP sink in this process, which answers at once and counts them).
// Each mode starts its own platform (bench/support/platform.ts), one subscription on one receiver, the ~1 KiB
// event through the gateway at saturation (bench/floor/compare.ts's `medir`: BENCH_FLOOR_EVENTS
// events, autocannon, 50 connections), until every delivery arrived.
//
//   BENCH_ONLY=rastreamento pnpm bench      this section alone
//   npx tsx bench/tracing/on-and-off.ts           the same
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { registrarPublicacao } from '../support/benchmark-event';
import { cabecalho } from '../support/steady-phase';
import { aquecer, type Linha, medir, receptores } from '../floor/compare';
import { cpuPorUnidade } from '../support/cpu';
import { deleteVhost } from '../support/local-infra';
import { obtainPlatform } from '../support/platform';
import { runSection } from '../support/report';

export const HEADING = '## Tracing on and off (issue 21)';
const VHOST = 'hub-bench-rastreamento';

/** The OTLP/HTTP sink: accepts every export at /v1/traces, counts requests and bytes. */
async function sumidouro() {
  const conta = { exportacoes: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (p: Buffer) => {
      conta.bytes += p.length;
    });
    req.on('end', () => {
      conta.exportacoes += 1;
      res.writeHead(200, { 'content-type': String(req.headers['content-type'] ?? 'application/x-protobuf') }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    conta,
    fechar: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function umModo(nome: string, env: Record<string, string>, log: (line: string) => void): Promise<Linha> {
  const r = receptores(1);
  const platform = await obtainPlatform(log, { vhost: VHOST, ownDatabasesOnly: true, env });
  try {
    const [url] = await r.urls;
    const { token, corpos } = await registrarPublicacao(platform, { um: [url!] });
    const alvo = {
      nome,
      url: `${platform.gatewayUrl}/eventos`,
      headers: { authorization: `Bearer ${token}` },
      corpo: corpos.um,
      saudaveis: 1,
    };
    await aquecer(r, alvo, log);
    return await medir(r, alvo, undefined, log);
  } finally {
    await platform.stop();
    await r.stop();
    if (platform.rabbitmqUrl?.endsWith(`/${VHOST}`)) deleteVhost(VHOST);
  }
}

export async function rastreamento(log: (line: string) => void): Promise<string> {
  const cargaAntes = os.loadavg()[0]!;
  const sink = await sumidouro();
  try {
    const desligado = await umModo('tracing off (no exporter; traceparent still sent)', {}, log);
    const ligado = await umModo(
      'tracing on (every span exported over OTLP/HTTP)',
      { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'always_on' },
      log,
    );
    log(`  the sink got ${sink.conta.exportacoes} exports, ${(sink.conta.bytes / 1e6).toFixed(1)} MB`);
    const linha = (l: Linha) =>
      `| ${l.nome} | ${l.aceitos} | ${l.chegadas} / ${l.esperadas} | ${l.eventosPorSegundo.toFixed(0)} | ` +
      `${l.cpuMsProprio.toFixed(2)} | ${l.cpuMsPorEvento.toFixed(2)} | ${cpuPorUnidade(l.conta, l.aceitos)} |`;
    const razao = ligado.cpuMsProprio / desligado.cpuMsProprio;
    return [
      ...cabecalho(HEADING, cargaAntes, 'rastreamento'),
      'POST /eventos through the gateway (the ~1 KiB benchmark event), one subscription on one receiver, at ' +
        'saturation (autocannon, 50 connections), each mode on a platform of its own started by the benchmark. ' +
        'Off: no OTEL_* variable (the SDK does not start; the W3C traceparent is carried through the job to the ' +
        'subscriber). On: OTEL_EXPORTER_OTLP_ENDPOINT at an OTLP/HTTP sink in the benchmark process, ' +
        'OTEL_TRACES_SAMPLER=always_on, so every span of gateway, hub-api and the worker is exported ' +
        `(${sink.conta.exportacoes} exports, ${(sink.conta.bytes / 1e6).toFixed(1)} MB of protobuf in all).`,
      '',
      "| mode | accepted | deliveries | events/s e2e | CPU ms per event (the run's processes) | machine CPU ms per event | by process |",
      '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
      linha(desligado),
      linha(ligado),
      '',
      `- Tracing on costs ${razao.toFixed(2)}× the CPU per event of tracing off ` +
        `(+${(ligado.cpuMsProprio - desligado.cpuMsProprio).toFixed(2)} ms per event).`,
      '',
    ].join('\n');
  } finally {
    await sink.fechar();
  }
}

if (require.main === module) runSection(rastreamento, HEADING);

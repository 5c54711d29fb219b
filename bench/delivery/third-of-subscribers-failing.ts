// A third of the subscribers failing, and latency below saturation (issue 19), in one run on one
// machine: the e2e saturation rate with every subscriber healthy first (bench/floor/compare.ts's row
// through the gateway), then at a steady rate (bench/support/steady-phase.ts), 3 subscriptions on 3 receivers:
//   1. all healthy at half the saturation rate;
//   2. all healthy at a quarter of it: answer → first byte at the subscriber, target p50 ≤ 15 ms and
//      p99 ≤ 50 ms;
//   3. one subscriber of three answering 500 at half the saturation rate: the two healthy ones' p99,
//      target ≤ 2× their p99 of phase 1 (last, so the failing third's retries disturb no other phase).
//
//   BENCH_ONLY=terco pnpm bench       this section alone (`pnpm bench` runs it after the others)
//   npx tsx bench/delivery/third-of-subscribers-failing.ts            the same
//
// BENCH_TRACE_DIR: where each phase's trace goes (bench/support/phase-timeline.ts). BENCH_TERCO_SATURATION: the
// saturation rate in events/s (unset: measured, BENCH_FLOOR_EVENTS events); BENCH_TERCO_DURATION (60 s): each
// phase's load; BENCH_TERCO_WAIT (60 s): the longest wait after it for the healthy deliveries. Writes its
// section of docs/benchmarks.md.
import os from 'node:os';
import { registrarPublicacao } from '../support/benchmark-event';
import { cabecalho, entornoDaFase, entornoDe, type Fase, medirFase, ms, saturacao } from '../support/steady-phase';
import { type Alvo, receptores } from '../floor/compare';
import { deleteVhost } from '../support/local-infra';
import { obtainPlatform } from '../support/platform';
import { rastrear } from '../support/phase-timeline';
import { runSection } from '../support/report';

const SATURACAO = process.env.BENCH_TERCO_SATURATION ? Number(process.env.BENCH_TERCO_SATURATION) : undefined;
const DURACAO = Number(process.env.BENCH_TERCO_DURATION ?? 60);
const ESPERA_MS = Number(process.env.BENCH_TERCO_WAIT ?? 60) * 1000;
export const HEADING = '## A third of the subscribers failing, and latency below saturation (issue 19)';
const VHOST = 'hub-bench-terco';
const METAS = { razao: 2, p50: 15, p99: 50 };

/** Runs the phases; gives the section for docs/benchmarks.md. */
export async function terco(log: (line: string) => void): Promise<string> {
  const cargaAntes = os.loadavg()[0]!;
  const r = receptores(3);
  const platform = await obtainPlatform(log, { vhost: VHOST, ownDatabasesOnly: true });
  try {
    const [a, b, c] = (await r.urls).map((url) => url.replace(/\/ok$/, '/medir'));
    const falha = c!.replace(/\/medir$/, '/falha');
    const { token, corpos } = await registrarPublicacao(platform, { saudavel: [a!, b!, c!], falha: [a!, b!, falha] });
    const alvo = (nome: string, corpo: string, saudaveis: number): Alvo => ({
      nome,
      url: `${platform.gatewayUrl}/eventos`,
      headers: { authorization: `Bearer ${token}` },
      corpo,
      saudaveis,
    });
    const saudavel = alvo('all healthy', corpos.saudavel, 3);
    const s = await saturacao(r, saudavel, platform, SATURACAO, log);
    log(`e2e saturation, all healthy, through the gateway: ${s.toFixed(0)} events/s${SATURACAO ? ' (given)' : ''}`);
    // Each phase after a CHECKPOINT and a rollover of RabbitMQ's WAL, and once the machine has
    // settled from the phase before, as the isolation benchmark's (docs/decisions/isolation-benchmark.md): a phase measures its own rate, not the end of the one before.
    const entorno = { ...entornoDe(platform, VHOST), sossegar: true };
    // BENCH_TRACE_DIR: each phase's trace, second by second (bench/support/phase-timeline.ts; read it with
    // bench/profiling/phase-timeline-summary.ts).
    const fase = (a: Alvo, ritmo: number) =>
      medirFase(r, a, ritmo, DURACAO, ESPERA_MS, log, {
        ...entorno,
        rastro: rastrear(a.nome, async () => [], entorno.bancos, platform.metricsUrls),
      });
    const metade = await fase({ ...saudavel, nome: 'all healthy, ½ saturation' }, s / 2);
    const quarto = await fase({ ...saudavel, nome: 'all healthy, ¼ saturation' }, s / 4);
    const comFalha = await fase(alvo('1 of 3 answering 500, ½ saturation (the 2 healthy)', corpos.falha, 2), s / 2);
    return secao([metade, quarto, comFalha], {
      cargaAntes,
      saturacao: s,
      medida: SATURACAO === undefined,
      mode: platform.mode,
    });
  } finally {
    await platform.stop();
    await r.stop();
    if (platform.rabbitmqUrl?.endsWith(`/${VHOST}`)) deleteVhost(VHOST);
  }
}

const atingida = (sim: boolean) => (sim ? 'met' : '**NOT met**');

function secao(
  [metade, quarto, comFalha]: Fase[],
  info: { cargaAntes: number; saturacao: number; medida: boolean; mode: string },
): string {
  const razao = comFalha!.publicacaoP99 / metade!.publicacaoP99;
  const razaoResposta = comFalha!.respostaP99 / metade!.respostaP99;
  const linhas = [metade!, quarto!, comFalha!].map(
    (f) =>
      `| ${f.nome} | ${f.ritmo.toFixed(1)} | ${f.ritmoEnviado.toFixed(1)} | ${f.aceitos} | ${f.chegaram} / ${f.esperadas} | ` +
      `${ms(f.publicacaoP50)} | ${ms(f.publicacaoP99)} | ${ms(f.respostaP50)} | ${ms(f.respostaP99)} | ${ms(f.postP99)} | ${entornoDaFase(f)} | ${f.carga.toFixed(2)} |`,
  );
  return [
    ...cabecalho(HEADING, info.cargaAntes, 'terco'),
    `POST /eventos through the gateway (the ~1 KiB benchmark event, bench/support/benchmark-event.ts), open loop, ${DURACAO} s a phase, ` +
      '3 subscriptions on 3 receivers answering at once (bench/support/subscribers.ts, /medir; the failing one answers 500 on ' +
      `/falha and is retried with the platform's default delays). Saturation: ${info.saturacao.toFixed(0)} events/s ` +
      (info.medida
        ? "(bench/floor/compare.ts's row through the gateway, all healthy, measured first in this run)"
        : '(BENCH_TERCO_SATURATION)') +
      ". Latency per healthy delivery: from the event's publication (recebido_em, in the delivery's body) to its arrival " +
      'at the receiver, and from the 201 that announced it to its arrival (answer → first byte: the ~1.3 KiB request ' +
      "arrives whole on loopback); both on the machine's one clock. A delivery that had not arrived " +
      `${ESPERA_MS / 1000} s after the load stopped counts as never. Every phase starts after a CHECKPOINT and a rollover of RabbitMQ's quorum WAL, once the ` +
      'machine has settled (two seconds in a row under 30 % busy, 30 s at most); ' +
      '"checkpoints begun" counts those that still began during it (any session\'s), "other work\'s CPU" the share of ' +
      `the machine's CPUs processes not of this run took (docs/decisions/isolation-benchmark.md). ` +
      `Platform: ${info.mode}.`,
    '',
    "| phase | events/s asked | sent | accepted | healthy deliveries arrived | publication → arrival p50 ms | p99 ms | answer → first byte p50 ms | p99 ms | POST p99 ms | checkpoints begun | other work's CPU | load average at start |",
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...linhas,
    '',
    `- A third failing at ½ saturation: the healthy p99 is ${Number.isFinite(razao) ? razao.toFixed(2) : '–'}× the ` +
      `all-healthy one (answer → first byte: ${Number.isFinite(razaoResposta) ? razaoResposta.toFixed(2) : '–'}×); ` +
      `target ≤ ${METAS.razao}×: ${atingida(razao <= METAS.razao)}.`,
    `- At ¼ saturation, answer → first byte p50 ${ms(quarto!.respostaP50)} ms (target ≤ ${METAS.p50}: ` +
      `${atingida(quarto!.respostaP50 <= METAS.p50)}), p99 ${ms(quarto!.respostaP99)} ms (target ≤ ${METAS.p99}: ` +
      `${atingida(quarto!.respostaP99 <= METAS.p99)}).`,
    '',
  ].join('\n');
}

if (require.main === module) runSection(terco, HEADING);

// Below saturation: what the platform costs at a steady rate it keeps up with (issue 19). At a
// quarter of the saturation rate the machine stayed about as busy as at saturation, because each
// group write ran again as soon as the one before ended, carrying a few items; this measures it. For
// each rate: one phase through the gateway (bench/support/steady-phase.ts, 3 healthy subscribers), started once
// the machine has settled, and printed: answer → first byte and publication → arrival p50/p99, the
// machine's CPU per delivery by process (bench/support/cpu.ts), and each group write's statements and items
// per statement (bench/support/group-commit-metrics.ts). Writes nothing to docs/benchmarks.md: compare the
// lines of one run, e.g. the same rates with DELIVERY_RECORD_SPACING=0ms and its default in two runs back to
// back.
//
//   BENCH_ABAIXO_RATES=160,270 BENCH_ABAIXO_DURATION=30 npx tsx bench/delivery/cost-below-saturation.ts
import { contarCpu, cpuPorUnidade } from '../support/cpu';
import { descreverEscritas, lerEscritas } from '../support/group-commit-metrics';
import { registrarPublicacao } from '../support/benchmark-event';
import { entornoDe, esperarSossego, medirFase, ms } from '../support/steady-phase';
import { type Alvo, receptores } from '../floor/compare';
import { deleteVhost } from '../support/local-infra';
import { obtainPlatform } from '../support/platform';

const RATES = (process.env.BENCH_ABAIXO_RATES ?? '160').split(',').map(Number);
const DURACAO = Number(process.env.BENCH_ABAIXO_DURATION ?? 30);
const VHOST = 'hub-bench-abaixo';

async function main(): Promise<void> {
  const log = (line: string) => console.log(line);
  const r = receptores(3);
  const platform = await obtainPlatform(log, { vhost: VHOST, ownDatabasesOnly: true });
  try {
    const urls = (await r.urls).map((url) => url.replace(/\/ok$/, '/medir'));
    const { token, corpos } = await registrarPublicacao(platform, { saudavel: urls, falha: urls });
    const alvo: Alvo = {
      nome: 'all healthy',
      url: `${platform.gatewayUrl}/eventos`,
      headers: { authorization: `Bearer ${token}` },
      corpo: corpos.saudavel,
      saudaveis: 3,
    };
    const metricas = platform.metricsUrls ?? [];
    for (const ritmo of RATES) {
      await esperarSossego();
      const escritasAntes = await lerEscritas(metricas);
      const cpu = contarCpu();
      const f = await medirFase(r, alvo, ritmo, DURACAO, 30_000, log, entornoDe(platform, VHOST));
      const conta = cpu.fim();
      const escritas = descreverEscritas(escritasAntes, await lerEscritas(metricas));
      log(
        `${ritmo} events/s (DELIVERY_RECORD_SPACING ${process.env.DELIVERY_RECORD_SPACING ?? 'default'}): ` +
          `answer → first byte p50 ${ms(f.respostaP50)} / p99 ${ms(f.respostaP99)} ms; ` +
          `publication → arrival p50 ${ms(f.publicacaoP50)} / p99 ${ms(f.publicacaoP99)} ms; ` +
          `${f.chegaram}/${f.esperadas} arrived; machine CPU per delivery: ${cpuPorUnidade(conta, f.chegaram)}; ` +
          `items per statement: ${escritas}`,
      );
    }
  } finally {
    await platform.stop();
    await r.stop();
    deleteVhost(VHOST);
  }
}

void main();

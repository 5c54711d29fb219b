// Publications while a slow schema is registered (issue 41): POST /eventos through the gateway at a
// fixed rate, paced (open loop), with no subscriber (publication alone):
//   1. alone: the publications' p99;
//   2. the same while a schema of 10,000 patternProperties is being registered, one registration after
//      another through the phase (each runs in hub-api's compilation worker until HUB_SCHEMA_COMPILE_LIMIT
//      and is refused 422): their p99, target ≤ 2× phase 1's.
//
//   BENCH_ONLY=esquemas pnpm bench    this section alone
//   npx tsx bench/validation/publications-during-slow-registration.ts         the same
//
// BENCH_ESQUEMAS_RATE (200): publications a second. BENCH_ESQUEMAS_DURATION (30 s): each phase.
import os from 'node:os';
import { registrarPublicacao } from '../support/benchmark-event';
import { pacedLoad, type PacedResult } from '../support/paced-load';
import { obtainPlatform } from '../support/platform';
import { runSection } from '../support/report';

const RATE = Number(process.env.BENCH_ESQUEMAS_RATE ?? 200);
const DURACAO = Number(process.env.BENCH_ESQUEMAS_DURATION ?? 30);
export const HEADING = '## Publications while a slow schema is registered (issue 41)';
const VHOST = 'hub-bench-esquemas';
const META = 2;

const LENTO = {
  type: 'object',
  patternProperties: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`${i}`, { type: 'integer' }])),
};

interface Linha {
  nome: string;
  r: PacedResult;
  carga: number;
}

const linha = ({ nome, r, carga }: Linha) =>
  `| ${nome} | ${RATE} | ${r.ok} / ${r.sent} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${carga.toFixed(2)} |`;

/** Runs both phases; gives the section for docs/benchmarks.md. */
export async function esquemas(log: (line: string) => void): Promise<string> {
  const cargaAntes = os.loadavg()[0]!;
  const platform = await obtainPlatform(log, { vhost: VHOST, ownDatabasesOnly: true, without: 'delivery-worker' });
  try {
    const { token, corpos, master } = await registrarPublicacao(platform, { base: [] });
    const tipoId = (JSON.parse(corpos.base) as { tipo_de_evento_id: string }).tipo_de_evento_id;
    const publicar = () =>
      pacedLoad(
        `${platform.gatewayUrl}/eventos`,
        { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        RATE,
        DURACAO,
        { method: 'POST', body: corpos.base },
      );
    const linhas: Linha[] = [];
    let carga = os.loadavg()[0]!;
    linhas.push({ nome: 'publications alone', r: await publicar(), carga });
    log(`alone: p99 ${linhas[0]!.r.p99.toFixed(1)} ms`);
    let fim = false;
    const registros: { status: number; ms: number }[] = [];
    const registrar = async () => {
      while (!fim) {
        const inicio = performance.now();
        const resposta = await fetch(`${platform.gatewayUrl}/versao-de-esquema`, {
          method: 'POST',
          headers: { authorization: `Bearer ${master}`, 'content-type': 'application/json' },
          body: JSON.stringify({ tipo_de_evento_id: tipoId, esquema: LENTO }),
        });
        await resposta.text();
        registros.push({ status: resposta.status, ms: performance.now() - inicio });
      }
    };
    carga = os.loadavg()[0]!;
    const registrando = registrar();
    const durante = await publicar();
    fim = true;
    await registrando;
    linhas.push({ nome: 'while a 10,000-patternProperties schema is registered', r: durante, carga });
    const razao = durante.p99 / linhas[0]!.r.p99;
    const statuses = [...new Set(registros.map((r) => r.status))].join(', ');
    const msMedio = registros.reduce((a, r) => a + r.ms, 0) / Math.max(1, registros.length);
    return [
      HEADING,
      '',
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} × ${os.cpus()[0]?.model}, Node ${process.version}, loopback; load average ${cargaAntes.toFixed(2)} before the run (each phase's at its start in the table). Platform: ${platform.mode}.`,
      '',
      '```',
      `BENCH_ESQUEMAS_RATE=${RATE} BENCH_ESQUEMAS_DURATION=${DURACAO} BENCH_ONLY=esquemas pnpm bench`,
      '```',
      '',
      `POST /eventos through the gateway (the ~1 KiB benchmark event, no subscriber), paced at ${RATE}/s for ${DURACAO} s a phase; in the second, registrations of the 10,000-patternProperties schema one after another through the phase.`,
      '',
      '| phase | publications/s asked | accepted | p50 ms | p99 ms | load average at start |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...linhas.map(linha),
      '',
      `- Registrations during the phase: ${registros.length}, answered ${statuses} after ${(msMedio / 1000).toFixed(1)} s on average (HUB_SCHEMA_COMPILE_LIMIT).`,
      `- p99 during the registrations is ${razao.toFixed(2)}× alone; target ≤ ${META}×: **${razao <= META ? 'met' : 'NOT met'}**.`,
      '',
    ].join('\n');
  } finally {
    await platform.stop();
  }
}

if (require.main === module) runSection(esquemas, HEADING);

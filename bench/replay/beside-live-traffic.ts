// A replay beside live traffic (issue 40): 100,000 stored events of one type replayed to one
// subscription while live publications at a quarter of the e2e saturation rate go to three other
// subscriptions (of another type), against the same live load without a replay:
//   1. live only, ¼ saturation: the three subscribers' publication → arrival p99;
//   2. the same with the replay running from the start of the phase: their p99 (target ≤ 1.5× phase
//      1's), the replay's rate (its deliveries arrived per second during the phase, after which it is
//      cancelled), and the RSS peaks of hub-api and the worker in each phase (their /metrics, every 250 ms).
//
//   BENCH_ONLY=reproducao pnpm bench    this section alone
//   npx tsx bench/replay/beside-live-traffic.ts         the same
//
// BENCH_REPRODUCAO_EVENTS (100000): events replayed. BENCH_REPRODUCAO_SATURATION: the saturation rate
// (unset: measured as bench/delivery/third-of-subscribers-failing.ts does). BENCH_REPRODUCAO_DURATION (60 s):
// each phase's live load.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { pgClient } from '../support/databases';
import { call, dadosDe1KiB, registrarPublicacao } from '../support/benchmark-event';
import { cabecalho, entornoDe, type Fase, medirFase, ms, saturacao } from '../support/steady-phase';
import { type Alvo, receptores } from '../floor/compare';
import { deleteVhost } from '../support/local-infra';
import { obtainPlatform, type Platform } from '../support/platform';
import { runSection } from '../support/report';

const EVENTOS = Number(process.env.BENCH_REPRODUCAO_EVENTS ?? 100_000);
const SATURACAO = process.env.BENCH_REPRODUCAO_SATURATION ? Number(process.env.BENCH_REPRODUCAO_SATURATION) : undefined;
const DURACAO = Number(process.env.BENCH_REPRODUCAO_DURATION ?? 60);
const ESPERA_MS = 60_000;
export const HEADING = '## A replay beside live traffic (issue 40)';
const VHOST = 'hub-bench-reproducao';
const META = 1.5;

/** The peak resident memory of each /metrics (hub-api, the worker) while `medir` runs. */
async function picosDeRss<T>(urls: string[], medir: () => Promise<T>): Promise<{ valor: T; picosMb: number[] }> {
  const picos = urls.map(() => 0);
  const timer = setInterval(() => {
    urls.forEach(async (url, i) => {
      const texto = await fetch(url).then(
        (r) => r.text(),
        () => '',
      );
      const bytes = Number(/^process_resident_memory_bytes(?:\{[^}]*\})? (\d+)/m.exec(texto)?.[1]);
      if (Number.isFinite(bytes)) picos[i] = Math.max(picos[i]!, bytes / 2 ** 20);
    });
  }, 250);
  try {
    return { valor: await medir(), picosMb: picos };
  } finally {
    clearInterval(timer);
  }
}

/** The replay's receiver, in this process: answers 204 and counts distinct webhook-ids, with the time of each. */
async function receptorDaReproducao() {
  const vistas = new Set<string>();
  let primeira = 0;
  let ultima = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      if (typeof id === 'string' && !vistas.has(id)) {
        vistas.add(id);
        ultima = Date.now();
        primeira ||= ultima;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/reproducao`,
    contagem: () => ({ recebidas: vistas.size, primeira, ultima }),
    fechar: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** EVENTOS stored events of the replay's type, 1 KiB of dados each, received one millisecond apart an hour ago. */
async function guardarEventos(platform: Platform, tipoId: string): Promise<{ desde: string; ate: string }> {
  if (!platform.hubDatabaseUrl)
    throw new Error('the replay benchmark writes its events into hub_events: start the platform here');
  const db = pgClient(platform.hubDatabaseUrl);
  await db.connect();
  try {
    const inicio = new Date(Date.now() - 3_600_000);
    await db.query(
      `insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                           ocorrido_em, recebido_em, dados)
       select gen_random_uuid(), t.id, 1, t.aplicativo_id, 'pedido-' || n, x.em, x.em, $2::json
         from tipo_de_evento t, generate_series(1, $3) as n,
              lateral (select $4::timestamptz + n * interval '1 millisecond') as x(em)
        where t.id = $1`,
      [tipoId, JSON.stringify(dadosDe1KiB()), EVENTOS, inicio],
    );
    await db.query('vacuum analyze evento');
    return { desde: inicio.toISOString(), ate: new Date(inicio.getTime() + EVENTOS + 1).toISOString() };
  } finally {
    await db.end();
  }
}

interface Medida {
  fase: Fase;
  picosMb: number[];
}

/** Runs both phases; gives the section for docs/benchmarks.md. */
export async function reproducao(log: (line: string) => void): Promise<string> {
  const cargaAntes = os.loadavg()[0]!;
  const r = receptores(3);
  const alvoDaReproducao = await receptorDaReproducao();
  const platform = await obtainPlatform(log, { vhost: VHOST, ownDatabasesOnly: true });
  try {
    const urls = (await r.urls).map((url) => url.replace(/\/ok$/, '/medir'));
    const { token, corpos, master } = await registrarPublicacao(platform, {
      vivo: urls,
      reproduzido: [alvoDaReproducao.url],
    });
    const tipoReproduzido = (JSON.parse(corpos.reproduzido) as { tipo_de_evento_id: string }).tipo_de_evento_id;
    const [assinatura] = (
      await call<{ itens: { id: string }[] }>(
        'GET',
        `${platform.gatewayUrl}/assinatura?tipo_de_evento_id=${tipoReproduzido}`,
        master,
      )
    ).itens;
    const faixa = await guardarEventos(platform, tipoReproduzido);
    log(`${EVENTOS} events stored for the replay`);
    const vivo: Alvo = {
      nome: 'live only, ¼ saturation',
      url: `${platform.gatewayUrl}/eventos`,
      headers: { authorization: `Bearer ${token}` },
      corpo: corpos.vivo,
      saudaveis: 3,
    };
    const s = await saturacao(r, vivo, platform, SATURACAO, log);
    log(`e2e saturation through the gateway: ${s.toFixed(0)} events/s${SATURACAO ? ' (given)' : ''}`);
    const entorno = { ...entornoDe(platform, VHOST), sossegar: true };
    const metricas = platform.metricsUrls ?? [];
    const fase = (a: Alvo): Promise<Medida> =>
      picosDeRss(metricas, () => medirFase(r, a, s / 4, DURACAO, ESPERA_MS, log, entorno)).then(
        ({ valor, picosMb }) => ({ fase: valor, picosMb }),
      );
    const sem = await fase(vivo);
    let pedidaEm = 0;
    let noFimDaFase = { recebidas: 0, em: 0 };
    const pedida = { id: '' };
    const com = await picosDeRss(metricas, async () => {
      const url = `${platform.gatewayUrl}/assinatura/${assinatura!.id}/reproduzir`;
      pedida.id = (await call<{ id: string }>('POST', url, master, faixa)).id;
      pedidaEm = Date.now();
      const nome = 'live, ¼ saturation, with the replay';
      const medida = await medirFase(r, { ...vivo, nome }, s / 4, DURACAO, ESPERA_MS, log, entorno);
      noFimDaFase = { recebidas: alvoDaReproducao.contagem().recebidas, em: Date.now() };
      return medida;
    });
    // At its default rate a replay of 100,000 events takes minutes: measured over the phase, then cancelled.
    const depois = await call<{ situacao: string }>('GET', `${platform.gatewayUrl}/reproducao/${pedida.id}`, master);
    if (depois.situacao !== 'concluida')
      await call('POST', `${platform.gatewayUrl}/reproducao/${pedida.id}/cancelar`, master);
    const ritmo = noFimDaFase.recebidas / Math.max(0.001, (noFimDaFase.em - pedidaEm) / 1000);
    log(`replay: ${noFimDaFase.recebidas} of ${EVENTOS} deliveries arrived by the phase's end, ${ritmo.toFixed(0)}/s`);
    return secao(
      sem,
      { fase: com.valor, picosMb: com.picosMb },
      { cargaAntes, saturacao: s, ritmo, recebidas: noFimDaFase.recebidas, mode: platform.mode },
    );
  } finally {
    await platform.stop();
    await r.stop();
    await alvoDaReproducao.fechar();
    if (platform.rabbitmqUrl?.endsWith(`/${VHOST}`)) deleteVhost(VHOST);
  }
}

function secao(
  sem: Medida,
  com: Medida,
  info: { cargaAntes: number; saturacao: number; ritmo: number; recebidas: number; mode: string },
): string {
  const razao = com.fase.publicacaoP99 / sem.fase.publicacaoP99;
  const mb = (m: Medida, i: number) => (m.picosMb[i] ? m.picosMb[i]!.toFixed(0) : '–');
  const linha = (m: Medida) =>
    `| ${m.fase.nome} | ${m.fase.ritmo.toFixed(1)} | ${m.fase.aceitos} | ${m.fase.chegaram} / ${m.fase.esperadas} | ` +
    `${ms(m.fase.publicacaoP50)} | ${ms(m.fase.publicacaoP99)} | ${mb(m, 0)} | ${mb(m, 1)} | ${m.fase.carga.toFixed(2)} |`;
  return [
    ...cabecalho(HEADING, info.cargaAntes, 'reproducao'),
    `POST /eventos through the gateway (the ~1 KiB benchmark event) at ¼ of the e2e saturation ` +
      `(${info.saturacao.toFixed(0)} events/s), ${DURACAO} s a phase, to 3 subscriptions on 3 receivers; in the second ` +
      `phase a replay of ${EVENTOS} stored 1 KiB events (another type) to a fourth subscription runs from the start, ` +
      'with the default HUB_REPRODUCAO_* settings (at most 200 events a second per replay), measured over the phase and ' +
      "then cancelled. p99 from the event's publication to its arrival; RSS peaks from " +
      `/metrics every 250 ms through each phase. Platform: ${info.mode}.`,
    '',
    '| phase | events/s asked | accepted | live deliveries arrived | live p50 ms | live p99 ms | hub-api RSS peak MB | worker RSS peak MB | load average at start |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    linha(sem),
    linha(com),
    '',
    `- The replay: ${info.recebidas} of ${EVENTOS} deliveries arrived during the phase, ${info.ritmo.toFixed(0)} per second from the request.`,
    `- Live p99 with the replay is ${Number.isFinite(razao) ? razao.toFixed(2) : '–'}× without it; target ≤ ${META}×: ` +
      `${razao <= META ? 'met' : '**NOT met**'}.`,
    '',
  ].join('\n');
}

if (require.main === module) runSection(reproducao, HEADING);

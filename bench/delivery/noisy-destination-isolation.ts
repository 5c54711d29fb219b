// One subscriber's outage or burst must not delay the others (issue 24), in one run on one machine:
// healthy subscribers (3 subscriptions on 3 receivers that answer at once) at a steady rate, alone,
// then beside each noisy destination in turn, alone again after each (a scenario is compared with the
// mean of the alone phases on either side of it, so that the machine's drift is not read as noise):
//   (a) a backlog of BENCH_ISOLAMENTO_BACKLOG jobs for a destination that refuses connections;
//   (b) the same for one that answers 500;
//   (c) the same for one that never answers (the platform's DELIVERY_TIMEOUT ends each attempt);
//   (d) a burst of as many events to a healthy but slow subscriber (50 ms an answer), its destination's
//       concurrency limit at 8 (PATCH /destino).
// Each noisy destination has a receiver of its own (an origin, so a destino row, a circuit and a queue
// of its own: a circuit left open by one scenario would hold the next one's jobs).
// Per phase: the healthy deliveries' p50/p99 from publication to arrival (bench/support/steady-phase.ts) and
// the p99's ratio to the value alone around it (target ≤ 2×); per noisy destination, its accounting at the end
// (paused first, so nothing moves while it is read): deliveries concluded, in fila_de_erro, still waiting,
// whether that agrees with their attempts, the error queue and what its receiver saw. Then it is torn
// down (subscription deleted, queues drained, error queue reconciled) before the next.
//
//   BENCH_ONLY=isolamento pnpm bench      this section alone (`pnpm bench` runs it after the others)
//   npx tsx bench/delivery/noisy-destination-isolation.ts           the same
//
// BENCH_ISOLAMENTO_RATE: the healthy events/s (unset: a quarter of the e2e saturation rate measured
// first, bench/floor/compare.ts's row through the gateway, BENCH_FLOOR_EVENTS events);
// BENCH_ISOLAMENTO_BACKLOG (100000): the backlog and the burst, written in bulk
// (bench/support/bulk-backlog.ts); BENCH_ISOLAMENTO_DURATION (60 s): each phase's load; BENCH_ISOLAMENTO_WAIT
// (120 s): the longest wait after it for the healthy deliveries, and for a teardown's queues;
// BENCH_ISOLAMENTO_TIMEOUT (2s) and BENCH_ISOLAMENTO_RETRY_DELAYS (1s,5s): the platform's DELIVERY_TIMEOUT and
// DELIVERY_RETRY_DELAYS, so that timeouts and retries happen within the phases and a teardown drains in
// seconds; BENCH_ISOLAMENTO_ATTEMPTS: the noisy subscription's maximo_de_tentativas (unset: the platform's
// default, 8); BENCH_ISOLAMENTO_SCENARIOS: the letters of the scenarios to run (unset: abcd; a diagnosis,
// since the target wants all four); BENCH_TRACE_DIR: where each phase's trace goes
// (bench/support/phase-timeline.ts; none when unset). Everything else goes through the platform's HTTP routes
// (gateway, master token), whatever the worker does inside. Writes its section of docs/benchmarks.md.
import os from 'node:os';
import { acumular, type Destinatario } from '../support/bulk-backlog';
import { call, registrarPublicacao } from '../support/benchmark-event';
import {
  cabecalho,
  type Entorno,
  entornoDaFase,
  entornoDe,
  type Fase,
  medirFase,
  ms,
  saturacao,
} from '../support/steady-phase';
import { type Alvo, type Contagem, receptores } from '../floor/compare';
import { deleteVhost, freePort } from '../support/local-infra';
import { obtainPlatform } from '../support/platform';
import { rastrear } from '../support/phase-timeline';
import { runSection } from '../support/report';

const RITMO = process.env.BENCH_ISOLAMENTO_RATE ? Number(process.env.BENCH_ISOLAMENTO_RATE) : undefined;
const ACUMULO = Number(process.env.BENCH_ISOLAMENTO_BACKLOG ?? 100_000);
const DURACAO = Number(process.env.BENCH_ISOLAMENTO_DURATION ?? 60);
const ESPERA_MS = Number(process.env.BENCH_ISOLAMENTO_WAIT ?? 120) * 1000;
/** The noisy subscription's maximo_de_tentativas (unset: the platform's default). */
const TENTATIVAS = process.env.BENCH_ISOLAMENTO_ATTEMPTS ? Number(process.env.BENCH_ISOLAMENTO_ATTEMPTS) : undefined;
const PLATAFORMA = {
  DELIVERY_TIMEOUT: process.env.BENCH_ISOLAMENTO_TIMEOUT ?? '2s',
  DELIVERY_RETRY_DELAYS: process.env.BENCH_ISOLAMENTO_RETRY_DELAYS ?? '1s,5s',
};
/** The slow subscriber's destination limit (issue 24). */
const CONCORRENCIA_LENTA = 8;
/** How long the workers take to read a destination's change (DELIVERY_DESTINOS_REFRESH, 2 s), with a margin. */
const LEITURA_DOS_DESTINOS_MS = 5_000;
export const HEADING = "## Isolation: one destination's outage or burst beside healthy subscribers (issue 24)";
const VHOST = 'hub-bench-isolamento';
const ALVO_DA_META = 2;

const esperar = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Cenario {
  nome: string;
  /** The noisy subscription's URL, from the noisy receiver's /ok URL and the refused one. */
  url: (ruidoso: string, recusada: string) => string;
  /** What its receiver counted, and the recorded figure it must equal. */
  recebidas?: { ler: (c: Contagem) => number; devidas: (falhas: number, concluidas: number) => number };
  concorrencia?: number;
}

/** Each request the receiver got was one failed attempt (500, or no answer before the timeout). */
const porFalha = (falhas: number) => falhas;

const CENARIOS: Cenario[] = [
  { nome: '(a) backlog, connection refused', url: (_r, recusada) => recusada },
  {
    nome: '(b) backlog, answers 500',
    url: (r) => r.replace(/\/ok$/, '/falha'),
    recebidas: { ler: (c) => c.falhas, devidas: porFalha },
  },
  {
    nome: '(c) backlog, never answers (timeouts)',
    url: (r) => r.replace(/\/ok$/, '/mudo'),
    recebidas: { ler: (c) => c.sem_resposta, devidas: porFalha },
  },
  {
    nome: `(d) burst to a slow subscriber (50 ms, concurrency ${CONCORRENCIA_LENTA})`,
    url: (r) => r.replace(/\/ok$/, '/lento'),
    // Distinct deliveries it answered: each concluded once.
    recebidas: { ler: (c) => c.entregues, devidas: (_falhas, concluidas) => concluidas },
    concorrencia: CONCORRENCIA_LENTA,
  },
];

/** The scenarios run: all four unless BENCH_ISOLAMENTO_SCENARIOS names some by letter ("a", "bd"). */
const ESCOLHIDOS = CENARIOS.filter((c) =>
  (process.env.BENCH_ISOLAMENTO_SCENARIOS ?? 'abcd').includes(c.nome.charAt(1)),
);

/** Where a run writes: a run of some scenarios only is a diagnosis, kept apart from the target's section. */
export const SECAO =
  ESCOLHIDOS.length === CENARIOS.length
    ? HEADING
    : `## Isolation, scenarios ${ESCOLHIDOS.map((c) => c.nome.charAt(1)).join('')} only (a diagnosis, issue 24)`;

/** What the platform's routes say of the noisy subscription, and of the error queue. */
interface Contas {
  /** the subscription's deliveries, and those in each final state */
  entregas: number;
  concluida: number;
  fila_de_erro: number;
  cancelada: number;
  tentativas: number;
  sucessos: number;
  filaDeErro: number;
  recebidas?: number;
  /** What the attempts say the receiver should have counted. */
  devidas?: number;
}

interface Ruido {
  cenario: Cenario;
  maximo: number;
  escritaSegundos: number;
  relaySegundos: number;
  /** The VACUUM (ANALYZE) in place of autovacuum (bench/support/bulk-backlog.ts), when the server runs none. */
  limpezaSegundos?: number;
  contas: Contas;
  erroAntes: number;
  regras: [boolean, string][];
  desmontagem: string;
}

interface Linha {
  fase: Fase;
  ruido?: Ruido;
}

/** The final states; a delivery in none of them is still waiting (pendente, em_andamento, aguardando_nova_tentativa). */
const FINAIS = ['concluida', 'fila_de_erro', 'cancelada'] as const;

/** The platform's routes as an operator (the master) uses them. */
function operador(api: string, master: string) {
  const pedir = <T>(method: string, rota: string, body?: unknown) => call<T>(method, `${api}${rota}`, master, body);
  const total = async (rota: string) => (await pedir<{ total: number }>('GET', `${rota}&tamanho=1`)).total;
  const filas = () => pedir<{ nome: string; papel: string; mensagens: number; consumidores: number }[]>('GET', '/fila');
  const filaDeErro = async () => (await filas()).find((f) => f.papel === 'erro')?.mensagens ?? 0;
  return {
    pedir,
    filas,
    filaDeErro,
    /** Messages waiting in the work and delay queues. */
    aEntregar: async () => (await filas()).filter((f) => f.papel !== 'erro').reduce((soma, f) => soma + f.mensagens, 0),
    async contas(assinaturaId: string): Promise<Contas> {
      const entregas = `/entrega?assinatura_id=${assinaturaId}`;
      const finais = {} as Record<(typeof FINAIS)[number], number>;
      for (const s of FINAIS) finais[s] = await total(`${entregas}&situacao=${s}`);
      return {
        // Waiting ones move between their three states even while paused: they are what is left.
        entregas: await total(entregas),
        ...finais,
        tentativas: await total(`/tentativa?assinatura_id=${assinaturaId}`),
        sucessos: await total(`/tentativa?assinatura_id=${assinaturaId}&sucesso=true`),
        filaDeErro: await filaDeErro(),
      };
    },
    /** The destination row of this URL's origin, once a worker has met it (at most 60 s). */
    async destino(url: string): Promise<string> {
      const origem = new URL(url).origin;
      for (let i = 0; i < 120; i++) {
        const { itens } = await pedir<{ itens: { id: string; origem: string }[] }>('GET', '/destino?tamanho=500');
        const achado = itens.find((d) => d.origem === origem);
        if (achado) return achado.id;
        await esperar(500);
      }
      throw new Error(`no destination row for ${origem} within 60 s`);
    },
  };
}
type Operador = ReturnType<typeof operador>;

/** Reads until two reads 3 s apart agree on what can no longer move (the destination is paused), at most 60 s. */
async function contasParadas(op: Operador, assinaturaId: string, ruidoso: ReturnType<typeof receptores>, c: Cenario) {
  const ler = async (): Promise<Contas> => {
    const contas = await op.contas(assinaturaId);
    if (!c.recebidas) return contas;
    const falhas = contas.tentativas - contas.sucessos;
    return {
      ...contas,
      recebidas: c.recebidas.ler(await ruidoso.contagem()),
      devidas: c.recebidas.devidas(falhas, contas.concluida),
    };
  };
  const chave = (x: Contas) =>
    JSON.stringify([x.concluida, x.fila_de_erro, x.tentativas, x.sucessos, x.filaDeErro, x.recebidas]);
  let antes = await ler();
  for (let i = 0; i < 20; i++) {
    await esperar(3_000);
    const agora = await ler();
    if (chave(agora) === chave(antes)) return agora;
    antes = agora;
  }
  return antes;
}

const esperando = (c: Contas) => c.entregas - c.concluida - c.fila_de_erro - c.cancelada;

/** The rules a disagreement broke ('' when none). */
const desacordos = (lista: [boolean, string][]) =>
  lista
    .filter(([ok]) => !ok)
    .map(([, texto]) => texto)
    .join('; ');

/** Whether the noisy deliveries' states agree with their attempts, the error queue and the receiver. */
function regras(contas: Contas, entregas: number, maximo: number, erroAntes: number): [boolean, string][] {
  const c = contas;
  const falhas = c.tentativas - c.sucessos;
  const lista: [boolean, string][] = [
    [c.entregas === entregas, `${c.entregas} deliveries of ${entregas} made`],
    [c.sucessos === c.concluida, `${c.sucessos} successful attempts for ${c.concluida} concluded`],
    [
      falhas >= c.fila_de_erro * maximo,
      `${falhas} failed attempts, ${maximo} for each of ${c.fila_de_erro} in fila_de_erro`,
    ],
    [
      falhas <= c.fila_de_erro * maximo + (esperando(c) + c.concluida) * (maximo - 1),
      'no delivery failed more often than its attempts allow',
    ],
    [
      c.filaDeErro - erroAntes === c.fila_de_erro,
      `error queue +${c.filaDeErro - erroAntes} for ${c.fila_de_erro} in fila_de_erro`,
    ],
  ];
  if (contas.recebidas !== undefined)
    lista.push([contas.recebidas === contas.devidas, `receiver saw ${contas.recebidas} (${contas.devidas} recorded)`]);
  return lista;
}

async function comRuido(
  contexto: {
    op: Operador;
    gatewayUrl: string;
    token: string;
    corpoDoRuido: string;
    databaseUrl: string;
    saudaveis: ReturnType<typeof receptores>;
    recusada: string;
    alvo: Alvo;
    ritmo: number;
    run: string;
    entorno: Entorno;
    /** hub-api's and the worker's /metrics, for the trace (bench/support/phase-timeline.ts) */
    metricas?: string[];
  },
  cenario: Cenario,
  indice: number,
  log: (line: string) => void,
): Promise<Linha> {
  log(`${cenario.nome}:`);
  // A receiver of its own, so an origin of its own: a destination's row (its circuit, its queue, its
  // limit) outlives its subscription, and a circuit opened by (b) would still hold (c)'s and (d)'s jobs.
  const ruidoso = receptores(1);
  try {
    return await comRuidoEm(contexto, cenario, indice, log, ruidoso, (await ruidoso.urls)[0]!);
  } finally {
    await ruidoso.stop();
  }
}

async function comRuidoEm(
  contexto: Parameters<typeof comRuido>[0],
  cenario: Cenario,
  indice: number,
  log: (line: string) => void,
  ruidoso: ReturnType<typeof receptores>,
  urlRuidosa: string,
): Promise<Linha> {
  const { op } = contexto;
  const evento = JSON.parse(contexto.corpoDoRuido) as {
    tipo_de_evento_id: string;
    entidade_id: string;
    dados: unknown;
  };
  const assinante = await op.pedir<{ id: string }>('POST', '/aplicativo', {
    nome: `Ruidoso ${indice + 1}`,
    client_id: `bench_ruidoso_${indice + 1}_${contexto.run}`,
  });
  const assinatura = await op.pedir<{
    id: string;
    url_de_destino: string;
    maximo_de_tentativas: number;
    tipo_de_evento_nome: string;
  }>('POST', '/assinatura', {
    aplicativo_assinante_id: assinante.id,
    tipo_de_evento_id: evento.tipo_de_evento_id,
    versao_do_esquema: 1,
    url_de_destino: cenario.url(urlRuidosa, contexto.recusada),
    ...(TENTATIVAS ? { maximo_de_tentativas: TENTATIVAS } : {}),
  });
  const tipo = await op.pedir<{ aplicativo_id: string }>('GET', `/tipo-de-evento/${evento.tipo_de_evento_id}`);
  const erroAntes = await op.filaDeErro();
  // One event through the API first: the subscription works, and a worker meets the destination
  // (its row, which PATCH /destino and the pause need, is made then).
  await call('POST', `${contexto.gatewayUrl}/eventos`, contexto.token, evento);
  const destino = await op.destino(assinatura.url_de_destino);
  if (cenario.concorrencia) {
    await op.pedir('PATCH', `/destino/${destino}`, { concorrencia_maxima: cenario.concorrencia });
    await esperar(LEITURA_DOS_DESTINOS_MS);
  }
  // Traced from before the backlog is written: its relay and its isolation are part of the phase.
  const rastro = rastrear(cenario.nome, op.filas, contexto.entorno.bancos, contexto.metricas);
  log(`  writing ${ACUMULO} events for it in bulk (publication's statement), then waiting for the relay…`);
  const destinatario: Destinatario = {
    assinaturaId: assinatura.id,
    aplicativoAssinanteId: assinante.id,
    urlDeDestino: assinatura.url_de_destino,
    maximoDeTentativas: assinatura.maximo_de_tentativas,
    tipoDeEventoId: evento.tipo_de_evento_id,
    tipoNome: assinatura.tipo_de_evento_nome,
    aplicativoPublicadorId: tipo.aplicativo_id,
  };
  const { escritaSegundos, relaySegundos, limpezaSegundos } = await acumular(
    contexto.databaseUrl,
    destinatario,
    ACUMULO,
    {
      entidadeId: evento.entidade_id,
      dadosTexto: JSON.stringify(evento.dados),
    },
  );
  log(
    `    written in ${escritaSegundos.toFixed(1)} s, relayed to RabbitMQ ${relaySegundos.toFixed(1)} s later; ` +
      (limpezaSegundos === undefined ? '' : `vacuumed and analyzed in ${limpezaSegundos.toFixed(1)} s; `) +
      `${await op.aEntregar()} messages in the work and delay queues now`,
  );
  const fase = await medirFase(
    contexto.saudaveis,
    { ...contexto.alvo, nome: `healthy beside ${cenario.nome}` },
    contexto.ritmo,
    DURACAO,
    ESPERA_MS,
    log,
    { ...contexto.entorno, rastro },
  );
  // The accounting, with the destination paused: no attempt starts, those under way end and are recorded.
  await op.pedir('POST', `/destino/${destino}/pausar`);
  const contas = await contasParadas(op, assinatura.id, ruidoso, cenario);
  // The backlog and the event through the API.
  const r = regras(contas, ACUMULO + 1, assinatura.maximo_de_tentativas, erroAntes);
  log(
    `  noisy: ${contas.entregas} deliveries, ${contas.concluida} concluded, ${contas.fila_de_erro} in fila_de_erro, ` +
      `${esperando(contas)} waiting, ${contas.cancelada} cancelled; ${contas.tentativas} attempts ` +
      `(${contas.sucessos} successful); ${desacordos(r) ? `DISAGREES: ${desacordos(r)}` : 'agrees'}`,
  );
  const desmontagem = await desmontar(op, assinatura.id, destino, erroAntes, log);
  return {
    fase,
    ruido: {
      cenario,
      maximo: assinatura.maximo_de_tentativas,
      escritaSegundos,
      relaySegundos,
      limpezaSegundos,
      contas,
      erroAntes,
      regras: r,
      desmontagem,
    },
  };
}

/**
 * The noisy subscription deleted (its waiting deliveries and those in fila_de_erro are cancelled), its
 * destination resumed, the work and delay queues drained (jobs of cancelled deliveries are dropped),
 * and the error queue reconciled (DELETE schedules that too) until it is back to its depth before the
 * scenario. Says how it went.
 */
async function desmontar(
  op: Operador,
  assinaturaId: string,
  destino: string,
  erroAntes: number,
  log: (line: string) => void,
) {
  const inicio = Date.now();
  const antesDoFim = () => Date.now() - inicio < ESPERA_MS;
  await op.pedir('DELETE', `/assinatura/${assinaturaId}`);
  await op.pedir('POST', `/destino/${destino}/retomar`);
  // Closed by hand, as an operator cleaning up would: while open its queue is not consumed, and
  // half-open one job at a time, so the cancelled backlog would still be draining (a claim each)
  // during the next scenario.
  await op.pedir('POST', `/destino/${destino}/fechar-circuito`);
  let restam = await op.aEntregar();
  for (let vazias = 0; vazias < 2 && antesDoFim(); ) {
    await esperar(1_000);
    restam = await op.aEntregar();
    vazias = restam === 0 ? vazias + 1 : 0;
  }
  const falhou = await op.pedir('POST', '/fila/erro/conciliar').then(
    () => '',
    (error: Error) => ` (its reconciliation failed: ${error.message.slice(0, 120)})`,
  );
  let erro = await op.filaDeErro();
  while (erro !== erroAntes && antesDoFim()) {
    await esperar(1_000);
    erro = await op.filaDeErro();
  }
  const texto =
    `${restam === 0 ? 'queues drained' : `${restam} messages still queued`}, ` +
    `error queue ${erro === erroAntes ? 'back to' : 'at'} ${erro}${erro === erroAntes ? '' : ` (${erroAntes} before)`}` +
    `${falhou} in ${((Date.now() - inicio) / 1000).toFixed(0)} s`;
  log(`  torn down: ${texto}`);
  return texto;
}

/** Runs every phase; gives the section for docs/benchmarks.md. */
export async function isolar(log: (line: string) => void): Promise<string> {
  const cargaAntes = os.loadavg()[0]!;
  const saudaveis = receptores(3);
  // A port nobody listens on: connections to it are refused.
  const recusada = `http://127.0.0.1:${await freePort()}/recusa`;
  const platform = await obtainPlatform(log, { vhost: VHOST, ownDatabasesOnly: true, env: PLATAFORMA });
  try {
    if (!platform.hubDatabaseUrl)
      throw new Error('the backlog is written into hub_events: give BENCH_HUB_DATABASE_URL with BENCH_GATEWAY_URL');
    if (process.env.BENCH_GATEWAY_URL)
      log(
        `note: a running platform keeps its own DELIVERY_TIMEOUT and DELIVERY_RETRY_DELAYS (wanted ${JSON.stringify(PLATAFORMA)})`,
      );
    const medir = (await saudaveis.urls).map((url) => url.replace(/\/ok$/, '/medir'));
    const { token, corpos, master } = await registrarPublicacao(platform, { saudavel: medir, ruido: [] });
    const alvo: Alvo = {
      nome: 'healthy, alone',
      url: `${platform.gatewayUrl}/eventos`,
      headers: { authorization: `Bearer ${token}` },
      corpo: corpos.saudavel,
      saudaveis: 3,
    };
    // A given rate stands for a quarter of the saturation (the warm-up runs either way).
    const saturado = await saturacao(saudaveis, alvo, platform, RITMO === undefined ? undefined : RITMO * 4, log);
    const ritmo = saturado / 4;
    log(
      RITMO === undefined
        ? `e2e saturation ${saturado.toFixed(0)} events/s through the gateway: the healthy rate is a quarter, ${ritmo.toFixed(1)} events/s`
        : `healthy rate ${ritmo} events/s (BENCH_ISOLAMENTO_RATE)`,
    );
    // hub-api directly when known: reconciling a large error queue outlasts the gateway's upstream timeout.
    const op = operador(platform.hubApiUrl ?? platform.gatewayUrl, master);
    // Every phase after a CHECKPOINT and a rollover of RabbitMQ's quorum WAL (bench/support/steady-phase.ts).
    // Each phase waits for the machine to settle first (bench/support/steady-phase.ts, esperarSossego): the
    // bulk backlog written just before a scenario, and the teardown just before an alone phase, are set-up, not
    // noise.
    const entorno = { ...entornoDe(platform, VHOST), sossegar: true };
    const { bancos } = entorno;
    // The healthy load alone before the first scenario and again after each: a scenario is compared
    // with the alone phases on either side of it, so that a machine that slows or speeds up during
    // the run (other sessions' work, its own thermal or steal time) is not read as a noisy neighbour.
    const sozinha = async (rotulo: string): Promise<Linha> => ({
      fase: await medirFase(saudaveis, { ...alvo, nome: `healthy, ${rotulo}` }, ritmo, DURACAO, ESPERA_MS, log, {
        ...entorno,
        rastro: rastrear(rotulo, op.filas, bancos, platform.metricsUrls),
      }),
    });
    const linhas: Linha[] = [await sozinha('alone')];
    const contexto = {
      op,
      entorno,
      gatewayUrl: platform.gatewayUrl,
      token,
      corpoDoRuido: corpos.ruido,
      databaseUrl: platform.hubDatabaseUrl,
      saudaveis,
      recusada,
      alvo,
      ritmo,
      run: Date.now().toString(36),
      metricas: platform.metricsUrls,
    };
    for (const [i, cenario] of ESCOLHIDOS.entries()) {
      linhas.push(await comRuido(contexto, cenario, i, log));
      linhas.push(await sozinha(`alone after ${cenario.nome.slice(0, 3)}`));
    }
    return secao(linhas, {
      cargaAntes,
      ritmo,
      saturado: RITMO === undefined ? saturado : undefined,
      mode: platform.mode,
    });
  } finally {
    await platform.stop();
    await saudaveis.stop();
    if (platform.rabbitmqUrl?.endsWith(`/${VHOST}`)) deleteVhost(VHOST);
  }
}

/**
 * A phase's healthy p99 against its yardstick: a scenario's against the mean of the alone phases
 * right before and after it; an alone phase's against the first (how far the machine drifted).
 */
function razaoDe(linhas: Linha[], i: number): number {
  const p99 = linhas[i]!.fase.publicacaoP99;
  if (!linhas[i]!.ruido) return razaoDaPrimeira(linhas, i);
  const antes = linhas[i - 1]!.fase.publicacaoP99;
  const depois = linhas[i + 1]?.fase.publicacaoP99 ?? antes;
  return p99 / ((antes + depois) / 2);
}

/** A phase's healthy p99 against the first alone phase's (the stricter yardstick). */
const razaoDaPrimeira = (linhas: Linha[], i: number) => linhas[i]!.fase.publicacaoP99 / linhas[0]!.fase.publicacaoP99;

function secao(linhas: Linha[], info: { cargaAntes: number; ritmo: number; saturado?: number; mode: string }): string {
  const saudaveis = linhas.map(({ fase: f, ruido }, i) => {
    const r = razaoDe(linhas, i);
    const primeira = razaoDaPrimeira(linhas, i);
    const meta = ruido ? (r <= ALVO_DA_META ? 'met' : '**NOT met**') : '';
    return (
      `| ${f.nome.replace(/^healthy(, | beside )/, '')} | ${f.ritmoEnviado.toFixed(1)} | ${f.aceitos} | ${f.chegaram} / ${f.esperadas} | ` +
      `${ms(f.publicacaoP50)} | ${ms(f.publicacaoP99)} | ${Number.isFinite(r) ? `${r.toFixed(2)}×` : '–'} | ${meta} | ` +
      `${Number.isFinite(primeira) ? `${primeira.toFixed(2)}×` : '–'} | ` +
      `${ms(f.respostaP50)} / ${ms(f.respostaP99)} | ${entornoDaFase(f)} | ${f.carga.toFixed(2)} |`
    );
  });
  const ruidosas = linhas.flatMap(({ ruido }) => {
    if (!ruido) return [];
    const c = ruido.contas;
    const contra = desacordos(ruido.regras);
    return [
      `| ${ruido.cenario.nome} | ${c.entregas} | ${c.concluida} | ${c.fila_de_erro} | ${esperando(c)} | ${c.cancelada} | ` +
        `${c.tentativas - c.sucessos} / ${c.sucessos} | ${ruido.maximo} | +${c.filaDeErro - ruido.erroAntes} | ` +
        `${c.recebidas ?? '–'} | ${contra ? `**no**: ${contra}` : 'yes'} | ` +
        `${ruido.escritaSegundos.toFixed(1)} + ${ruido.relaySegundos.toFixed(1)}` +
        `${ruido.limpezaSegundos === undefined ? '' : ` + ${ruido.limpezaSegundos.toFixed(1)}`} | ${ruido.desmontagem} |`,
    ];
  });
  const atingida = linhas.every((l, i) => !l.ruido || razaoDe(linhas, i) <= ALVO_DA_META);
  return [
    ...cabecalho(SECAO, info.cargaAntes, 'isolamento'),
    `Healthy load: POST /eventos through the gateway (the ~1 KiB benchmark event, bench/support/benchmark-event.ts), open loop at ` +
      `${info.ritmo.toFixed(1)} events/s ` +
      (info.saturado === undefined
        ? '(BENCH_ISOLAMENTO_RATE)'
        : `(a quarter of the e2e saturation measured first in this run, ${info.saturado.toFixed(0)} events/s)`) +
      `, ${DURACAO} s a phase, 3 subscriptions on 3 receivers answering at once (bench/support/subscribers.ts, /medir). ` +
      "Latency: from the event's publication (recebido_em, in the delivery's body) to the delivery's arrival at the " +
      'receiver, and from the 201 to the arrival; a delivery that had not arrived ' +
      `${ESPERA_MS / 1000} s after the load stopped counts as never. ` +
      `Noisy destinations: ${ACUMULO.toLocaleString('en-US')} events of one delivery each, **written in bulk** straight into ` +
      "hub_events by publication's own statement (hub-api's SQL_DA_GRAVACAO: event, delivery and outbox row, the " +
      "shapes POST /eventos writes; bench/support/bulk-backlog.ts), published to RabbitMQ by the platform's outbox relay before " +
      'the healthy load starts, plus one event through POST /eventos first (the destination made known). On a server ' +
      "with autovacuum off (this machine's CI configuration) the database is then vacuumed and analyzed once, as " +
      'autovacuum would within its naptime (the third figure of "bulk write + relay (+ vacuum) s"). The platform ran ' +
      `with DELIVERY_TIMEOUT=${PLATAFORMA.DELIVERY_TIMEOUT} and DELIVERY_RETRY_DELAYS=${PLATAFORMA.DELIVERY_RETRY_DELAYS} ` +
      'so timeouts and retries happen within a phase. Every phase starts right after a CHECKPOINT and a rollover ' +
      "of RabbitMQ's quorum-queue WAL (its segment writer awaited), so that the storage work owed to what was " +
      'written before it (the saturation measure, the bulk backlog and its vacuum) is not done inside it, ' +
      'stalling its commits and queues (docs/decisions/isolation-benchmark.md), and once ' +
      'the machine has settled (two seconds in a row under 30 % busy, at most 30 s: what RabbitMQ and the kernel ' +
      'still write of the backlog, or of a teardown, is set-up, not the noisy destination); ' +
      '"checkpoints begun" counts those that still did (the server is shared: any session\'s WAL counts), and ' +
      '"other work\'s CPU" is the share of the machine\'s CPUs that processes not of this run took during the phase. ' +
      'Platform: ' +
      `${info.mode}.`,
    '',
    "| phase | events/s sent | accepted | healthy deliveries arrived | publication → arrival p50 ms | p99 ms | p99 ÷ alone (a scenario: the mean of the alone phases before and after it; alone: the first) | target ≤ 2× | p99 ÷ the first alone | answer → arrival p50 / p99 ms | checkpoints begun | other work's CPU | load average at start |",
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
    ...saudaveis,
    '',
    `Target (the healthy p99 within ${ALVO_DA_META}× of its value alone, the mean of the alone phases on either side, in every scenario): **${atingida ? 'met' : 'NOT met'}**; ` +
      `against the first alone phase only: **${linhas.every((l, i) => !l.ruido || razaoDaPrimeira(linhas, i) <= ALVO_DA_META) ? 'met' : 'NOT met'}**. ` +
      'An alone phase after a scenario starts right after its teardown (queues drained, error queue reconciled), ' +
      'whose after-effects can fall in its first seconds: the trace (BENCH_TRACE_DIR) shows each second.',
    '',
    "The noisy destination's deliveries when its phase ended, read with the destination paused (GET /entrega and " +
      'GET /tentativa totals for its subscription, GET /fila for the error queue, the receiver\'s own counts). "Agrees": ' +
      'every delivery is in a state, one successful attempt per concluded delivery, each one in fila_de_erro failed ' +
      'its maximum of attempts and none failed more, the error queue grew by the deliveries in fila_de_erro, and its ' +
      'receiver saw as many requests (500, no answer) or distinct deliveries (slow) as the attempts recorded.',
    '',
    '| noisy destination | deliveries | concluded | fila_de_erro | still waiting | cancelled | attempts failed / successful | max attempts | error queue | receiver saw | agrees | bulk write + relay (+ vacuum) s | teardown |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |',
    ...ruidosas,
    '',
  ].join('\n');
}

if (require.main === module) runSection(isolar, SECAO);

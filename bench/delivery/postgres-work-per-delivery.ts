// PostgreSQL's own work per delivery, statement by statement (issue 19): the platform's hot statements
// in a loop against databases of their own, with no service, broker or HTTP around them. Each batch
// publishes events with publication's group write (SQL_DA_GRAVACAO of hub-api), then claims and records
// their deliveries with the worker's statements (entregas.repository.ts), all answered 200.
//
// Two sides, A and B, each a checkout (its migrations and its SQL) and optionally SQL run on its fresh
// database (an experiment: a trigger dropped, an index…), take turns batch by batch, so both meet the
// same machine (the server and the CPUs are shared: a figure of one run alone says little). Printed per
// delivery and side: the CPU time of the backend running each statement (/proc/<pid>/schedstat, in
// nanoseconds: that backend's work alone, whatever else runs), then, side by side in a quiet second
// pass, the WAL of its database and the index entries (pg_walinspect, bench/floor/postgres.ts).
//
//   npx tsx bench/delivery/postgres-work-per-delivery.ts [rootA] [rootB]     # defaults: this checkout for both
//
// BENCH_PG_SQL_A / BENCH_PG_SQL_B: SQL run on that side's database first. BENCH_PG_EVENTOS (3,000 per
// side and round), BENCH_PG_LOTE (events per publication batch, 20), BENCH_PG_RODADAS (3: each round
// in fresh databases; medians printed), BENCH_PG_SEM_WAL=1 skips the WAL pass, BENCH_PG_DETALHE=1
// prints the WAL records per relation and type, BENCH_PG_EXPLICAR=A|B prints auto_explain's plans of one
// batch of that side (the triggers' statements and the foreign keys' checks included) and stops.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { dadosDe1KiB } from '../support/benchmark-event';
import { medidorPg } from '../floor/postgres';

const EVENTOS = Number(process.env.BENCH_PG_EVENTOS ?? 3000);
const LOTE = Number(process.env.BENCH_PG_LOTE ?? 20);
const RODADAS = Number(process.env.BENCH_PG_RODADAS ?? 3);
const ASSINATURAS = 3;
const ETAPAS = ['gravar', 'reivindicar', 'registrar'] as const;
type Etapa = (typeof ETAPAS)[number];

interface Cliente {
  connect(): Promise<void>;
  query<T = Record<string, unknown>>(
    q: string | { name: string; text: string; values: unknown[] },
    v?: unknown[],
  ): Promise<{ rows: T[] }>;
  on(evento: 'notice', f: (m: { message: string }) => void): void;
  end(): Promise<void>;
}

interface Modulos {
  Client: new (o: { connectionString: string }) => Cliente;
  createTestDatabase(prefixo: string, dir: string): Promise<{ url: string; drop(): Promise<void> }>;
  uuidv7(): string;
  SQL_DA_GRAVACAO: string;
  /** Since issue 19's second part: the text of a batch with no ordered delivery, its first 26 parameters. */
  SQL_DA_GRAVACAO_SEM_ORDEM?: string;
  valoresDaGravacao(lote: unknown[]): unknown[];
  /** Since issue 19's second pass: the statement publication chooses for a batch (name, text, parameters). */
  consultaDaGravacao?(lote: unknown[]): { nome: string; texto: string; valores: unknown[] };
  entregasRepository(
    sql: unknown,
    prazos: unknown,
  ): {
    reivindicar(p: unknown[]): Promise<unknown[]>;
    registrar(r: unknown[], agora: Date): Promise<unknown[]>;
  };
  migracoes: string;
}

async function carregar(raiz: string): Promise<Modulos> {
  const exigir = createRequire(path.join(raiz, 'packages/database/package.json'));
  const de = (arquivo: string) => import(path.join(raiz, arquivo));
  return {
    Client: exigir('pg').Client,
    createTestDatabase: (await de('packages/database/src/test-database.test-support.ts')).createTestDatabase,
    uuidv7: (await de('packages/database/src/ids.ts')).uuidv7,
    ...(await de('services/hub-api/src/features/publicacao/publicacao.repository.ts')),
    // Its statements' own module since they were declared (an older checkout has them in the repository).
    ...(await de('services/hub-api/src/features/publicacao/publicacao.sql.ts').catch(() => ({}))),
    entregasRepository: (await de('services/delivery-worker/src/features/entregas/entregas.repository.ts'))
      .entregasRepository,
    migracoes: path.join(raiz, 'packages/hub-data/migrations'),
  };
}

interface Ids {
  aplicativo: string;
  tipo: string;
  assinaturas: string[];
}

/** One side: its database, its two connections (publication's and the worker's) and its CPU so far. */
interface Lado {
  nome: string;
  m: Modulos;
  banco: { url: string; drop(): Promise<void> };
  nomeDoBanco: string;
  pub: Cliente;
  wrk: Cliente;
  pids: { pub: number; wrk: number };
  ids: Ids;
  repo: ReturnType<Modulos['entregasRepository']>;
  cpu: Record<Etapa, number>;
}

const cpuDe = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);

async function abrir(nome: string, m: Modulos, extra: string | undefined): Promise<Lado> {
  const banco = await m.createTestDatabase('h29pg', m.migracoes);
  const pub = new m.Client({ connectionString: banco.url });
  const wrk = new m.Client({ connectionString: banco.url });
  await pub.connect();
  await wrk.connect();
  if (extra) await pub.query(extra);
  // A session setting on both connections of side B (plan_cache_mode…).
  const sessao = nome === 'B' ? process.env.BENCH_PG_SESSAO_B : undefined;
  if (sessao) for (const c of [pub, wrk]) await c.query(sessao);
  const pid = async (c: Cliente) =>
    Number((await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid);
  // An experiment on the worker's statements: <dir>/<name>.sql replaces that statement's text on side B.
  const textos = nome === 'B' ? process.env.BENCH_PG_TEXTOS_B : undefined;
  const consultar = async (n: string, texto: string, valores: unknown[]) => {
    const arquivo = textos && path.join(textos, `${n}.sql`);
    const t = arquivo && existsSync(arquivo) ? readFileSync(arquivo, 'utf8') : texto;
    if (process.env.BENCH_PG_DUMP) writeFileSync(path.join(process.env.BENCH_PG_DUMP, `${n}.sql`), texto);
    return (await wrk.query({ name: n, text: t, values: valores })).rows;
  };
  // `run` takes a declared statement (this tree's worker); `consultar`, an older checkout's.
  const sql = {
    consultar,
    run: (s: { name: string; text: string }, valores: unknown[]) => consultar(s.name, s.text, valores),
  };
  return {
    nome,
    m,
    banco,
    nomeDoBanco: new URL(banco.url).pathname.slice(1),
    pub,
    wrk,
    pids: { pub: await pid(pub), wrk: await pid(wrk) },
    ids: await semear(pub, m.uuidv7),
    repo: m.entregasRepository(sql, { reivindicacaoMs: 120_000, reivindicacoesAteVeneno: 5 }),
    cpu: { gravar: 0, reivindicar: 0, registrar: 0 },
  };
}

async function fechar(l: Lado) {
  if (process.env.BENCH_PG_PLANOS)
    for (const c of [l.pub, l.wrk])
      for (const p of (
        await c.query<{ name: string; generic_plans: number; custom_plans: number }>(
          'select name, generic_plans, custom_plans from pg_prepared_statements',
        )
      ).rows)
        process.stdout.write(`${l.nome} ${p.name}: ${p.generic_plans} generic plans, ${p.custom_plans} custom plans\n`);
  await l.pub.end();
  await l.wrk.end();
  await l.banco.drop();
}

const DADOS = JSON.stringify(dadosDe1KiB());

/** One batch: LOTE events published, their deliveries claimed, then recorded as answered 200. */
async function lote(l: Lado) {
  const medir = async (etapa: Etapa, pid: number, f: () => Promise<unknown>) => {
    const c0 = cpuDe(pid);
    await f();
    l.cpu[etapa] += cpuDe(pid) - c0;
  };
  const gravacoes = Array.from({ length: LOTE }, () => gravacao(l.m.uuidv7, l.ids));
  // As publicacao.repository.ts's gravar chooses (no delivery here is ordered, no key).
  const consulta = l.m.consultaDaGravacao?.(gravacoes);
  const valores = l.m.valoresDaGravacao(gravacoes);
  const semOrdem = l.m.SQL_DA_GRAVACAO_SEM_ORDEM;
  await medir('gravar', l.pids.pub, () =>
    l.pub.query(
      consulta
        ? { name: consulta.nome, text: consulta.texto, values: consulta.valores }
        : semOrdem
          ? { name: 'publicacao_gravar_sem_ordem', text: semOrdem, values: valores.slice(0, 26) }
          : { name: 'publicacao_gravar', text: l.m.SQL_DA_GRAVACAO, values: valores },
    ),
  );
  const entregas = gravacoes.flatMap((g) => g.entregas.map((e) => e.id));
  await medir('reivindicar', l.pids.wrk, () =>
    l.repo.reivindicar(entregas.map((id) => ({ id, token: l.m.uuidv7(), anterior: null }))),
  );
  const agora = new Date();
  await medir('registrar', l.pids.wrk, () =>
    l.repo.registrar(
      entregas.map((id) => ({
        entrega_id: id,
        tentativa_id: l.m.uuidv7(),
        iniciada_em: agora,
        duracao_ms: 3,
        status_http: 200,
        sucesso: true,
        resposta: '',
        erro: null,
        // as the worker's signWebhook writes them
        cabecalhos: {
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(agora.getTime() / 1000)),
          'webhook-signature': `v1a,${'A'.repeat(86)}==`,
          'webhook-key-id': 'chave-2026-11',
        },
        encerrar: false,
        proxima_tentativa_em: new Date(agora.getTime() + 60_000),
        retorno_ate: new Date(agora.getTime() + 60_000),
      })),
      agora,
    ),
  );
}

async function explicar(l: Lado) {
  for (const c of [l.pub, l.wrk]) {
    c.on('notice', (m) => process.stdout.write(`${m.message}\n\n`));
    await c.query(`load 'auto_explain'`);
    for (const ajuste of [
      'log_level = notice',
      'log_min_duration = 0',
      'log_analyze = on',
      'log_buffers = on',
      'log_nested_statements = on',
      'log_triggers = on',
    ])
      await c.query(`set auto_explain.${ajuste}`);
  }
  await lote(l);
}

async function main() {
  const raizes = [process.argv[2], process.argv[3]].map((r) => path.resolve(r ?? path.join(__dirname, '../..')));
  const extras = [process.env.BENCH_PG_SQL_A, process.env.BENCH_PG_SQL_B];
  const modulos = [await carregar(raizes[0]!), await carregar(raizes[1]!)];
  for (const [i, r] of raizes.entries()) {
    const commit = execFileSync('git', ['-C', r, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim();
    process.stdout.write(`${'AB'[i]}: ${r} (${commit.slice(0, 80)})${extras[i] ? ' + SQL' : ''}\n`);
  }
  process.stdout.write(`${EVENTOS} events per side and round, ${LOTE} per batch, ${RODADAS} rounds\n`);
  const medidor = process.env.BENCH_PG_SEM_WAL ? undefined : await medidorPg();
  const resultados: Record<string, number>[][] = [[], []];
  for (let rodada = 0; rodada < RODADAS; rodada++) {
    const lados = [await abrir('A', modulos[0]!, extras[0]), await abrir('B', modulos[1]!, extras[1])];
    try {
      for (let i = 0; i < 10; i++) for (const l of lados) await lote(l); // plans cached, pages in
      // The generic plans were made on tables of a few rows (seq scans of entrega by id, soon
      // dearer than its primary key); an ANALYZE, as autovacuum would make, has them made again.
      if (process.env.BENCH_PG_ANALISAR) for (const l of lados) await l.pub.query('analyze');
      const alvo = process.env.BENCH_PG_EXPLICAR;
      if (alvo) {
        await explicar(lados[alvo === 'B' ? 1 : 0]!);
        break;
      }
      for (const l of lados) for (const e of ETAPAS) l.cpu[e] = 0;
      const entregas = EVENTOS * ASSINATURAS;
      for (let feitos = 0; feitos < EVENTOS; feitos += LOTE) for (const l of lados) await lote(l);
      const r = lados.map((l) => {
        const linha: Record<string, number> = {};
        for (const e of ETAPAS) linha[`${e} µs`] = l.cpu[e] / 1000 / entregas;
        linha['CPU µs'] = ETAPAS.reduce((s, e) => s + l.cpu[e], 0) / 1000 / entregas;
        return linha;
      });
      if (medidor) {
        // WAL one side at a time (each measure waits for its databases to settle).
        for (const [i, l] of lados.entries()) {
          const marco = await medidor.marcar([l.nomeDoBanco]);
          for (let feitos = 0; feitos < EVENTOS; feitos += LOTE) await lote(l);
          const t = await medidor.medir(marco, entregas);
          Object.assign(r[i]!, {
            'WAL B': t.walPorEntrega,
            'WAL B no FPI': t.walSemFpiPorEntrega,
            'index entries': t.indicesPorEntrega,
            'rows written': t.linhasPorEntrega,
            'HOT %': 100 * t.hot,
          });
          if (rodada === 0) {
            process.stdout.write(`${l.nome}: ${t.porTabela}\n${l.nome}: ${t.porRelacao}\n`);
            if (process.env.BENCH_PG_DETALHE) process.stdout.write(`${t.porRegistro}\n`);
          }
        }
      }
      for (const i of [0, 1]) {
        process.stdout.write(`round ${rodada + 1} ${'AB'[i]}: ${formatar(r[i]!)}\n`);
        resultados[i]!.push(r[i]!);
      }
    } finally {
      for (const l of lados) await fechar(l);
    }
  }
  await medidor?.close();
  if (resultados[0]!.length === 0) return;
  const medianas = resultados.map((rs) => {
    const m: Record<string, number> = {};
    for (const k of Object.keys(rs[0]!)) {
      const v = rs.map((r) => r[k]!).sort((a, b) => a - b);
      m[k] = v[Math.floor(v.length / 2)]!;
    }
    return m;
  });
  process.stdout.write(`median A: ${formatar(medianas[0]!)}\nmedian B: ${formatar(medianas[1]!)}\n`);
  const razao: Record<string, number> = {};
  for (const k of Object.keys(medianas[0]!)) razao[k] = medianas[1]![k]! / medianas[0]![k]!;
  process.stdout.write(`B ÷ A:    ${formatar(razao)}\n`);
}

const formatar = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${v < 10 ? v.toFixed(2) : v.toFixed(0)}`)
    .join(', ');

async function semear(c: Cliente, uuidv7: () => string): Promise<Ids> {
  const ids: Ids = { aplicativo: uuidv7(), tipo: uuidv7(), assinaturas: [] };
  await c.query(
    `insert into aplicativo (id, nome, client_id, ativo, criado_em, atualizado_em) values ($1, 'Loja', 'loja', true, now(), now())`,
    [ids.aplicativo],
  );
  await c.query(
    `insert into tipo_de_evento (id, nome, aplicativo_id, ativo, retencao_em_dias, criado_em, atualizado_em)
     values ($1, 'pedido.criado', $2, true, 30, now(), now())`,
    [ids.tipo, ids.aplicativo],
  );
  await c.query(
    `insert into versao_de_esquema (id, tipo_de_evento_id, versao, esquema, ativa, criado_em, atualizado_em)
     values ($1, $2, 1, '{}', true, now(), now())`,
    [uuidv7(), ids.tipo],
  );
  for (let i = 0; i < ASSINATURAS; i++) {
    const id = uuidv7();
    ids.assinaturas.push(id);
    await c.query(
      `insert into assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino,
         maximo_de_tentativas, ativa, criado_em, atualizado_em)
       values ($1, $2, $3, 1, $4, 5, true, now(), now())`,
      [id, ids.aplicativo, ids.tipo, `http://127.0.0.1:${4000 + i}/webhook`],
    );
  }
  return ids;
}

/** One publication as montarGravacao builds it (no Idempotency-Key, three unordered deliveries, ~1 KiB of dados). */
function gravacao(uuidv7: () => string, ids: Ids) {
  const recebidoEm = new Date();
  const id = uuidv7();
  const entidadeId = `pedido-${Math.floor(Math.random() * 1e6)}`;
  return {
    evento: {
      id,
      tipoDeEventoId: ids.tipo,
      versaoDoEsquema: 1,
      aplicativoPublicadorId: ids.aplicativo,
      entidadeId,
      ocorridoEm: recebidoEm,
      recebidoEm,
      publicadoPeloEmail: null,
      dadosTexto: DADOS,
    },
    entregas: ids.assinaturas.map((a, i) => ({
      id: uuidv7(),
      eventoId: id,
      eventoRecebidoEm: recebidoEm,
      entidadeId,
      assinaturaId: a,
      aplicativoAssinanteId: ids.aplicativo,
      tipoDeEventoId: ids.tipo,
      versaoDoEsquema: 1,
      urlDeDestino: `http://127.0.0.1:${4000 + i}/webhook`,
      maximoDeTentativas: 5,
      ordenada: false,
    })),
    trabalhos: [],
  };
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});

// Retention as the tables grow (issue 19): what erasing one expired day costs hub-api's retention
// job (services/hub-api/src/jobs/retencao.job.ts) on a database of 1,000,000 events over 10 days,
// with their deliveries and attempts, and what it costs beside it: a reader running GET /evento's
// first page (its SQL, sqlDaPagina) and a publisher writing events with publication's own statement
// (SQL_DA_GRAVACAO), one after another each, before and during the passes.
//
//   BENCH_ONLY=retencao pnpm bench     this section alone
//   npx tsx bench/retention/erase-expired-day.ts [--manter]
//
// Two passes, each erasing the oldest day left: the second one also walks the events the first one
// had to keep (a delivery still in the error queue), so that the cost of what retention keeps shows.
// WAL is read back with pg_walinspect and counted only for this database's relations (the cluster is
// shared). The passes run on a copy of the seeded database; --manter keeps the seeded one for the next run.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { migrate, uuidv7, withDatabase } from '../../packages/database/src';
import { createDb, HUB_DATA_MIGRATIONS_DIR } from '../../packages/hub-data/src';
import { createLogger } from '../../packages/log/src';
import { sqlDaPagina } from '../../services/hub-api/src/features/eventos/eventos.repository';
import { SQL_DA_GRAVACAO, valoresDaGravacao } from '../../services/hub-api/src/features/publicacao/publicacao.sql';
import { retencaoJob } from '../../services/hub-api/src/jobs/retencao.job';
import { runSection } from '../support/report';
import { pg, semear, sqlDaSemente } from '../support/seed-large-tables';
import { percentile } from '../support/paced-load';

export const HEADING = '## Retention: erasing an expired day of 1,000,000 events (issue 19)';
const EVENTOS = Number(process.env.BENCH_RETENCAO_EVENTOS ?? 1_000_000);
const DIAS = 10;
const ANTES_MS = 10_000;
const DIA_MS = 86_400_000;
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DATABASE = 'hub_retencao_bench';
/** The seeded database, copied for each run (the passes erase): kept with --manter, so the next run skips seeding. */
const SEMENTE = `hub_retencao_semente_${EVENTOS}`;
const manter = process.argv.includes('--manter');
const SLOT = `hub_retencao_bench_${process.pid}`;

/**
 * The shapes of bench/reads/event-lists.ts over 10 days instead of 30 (so a day is 100,000 events), every
 * delivery older than 10 minutes final, then one attempt per delivery as the worker records it. Every
 * type keeps its events 9 days, so the oldest day is expired.
 */
const SEED = [
  ...sqlDaSemente({ eventos: EVENTOS, dias: DIAS, retencaoEmDias: DIAS - 1, retentativasNoUltimoDia: false }),
  `insert into tentativa (id, entrega_id, assinatura_id, numero, iniciada_em, duracao_ms, status_http, sucesso, resposta,
                          cabecalhos)
     select pg_temp.uuid7(en.criada_em), en.id, en.assinatura_id, 1, en.criada_em, 40, case when en.situacao = 'concluida' then 200 else 500 end,
            en.situacao = 'concluida', case when en.situacao = 'concluida' then 'ok' else 'erro interno' end,
            '{"webhook-id":"x","webhook-timestamp":"1","webhook-signature":"v1,abc"}'
       from entrega en where en.situacao not in ('pendente', 'em_andamento')`,
];

const resumo = (tempos: number[]) => {
  const o = [...tempos].sort((a, b) => a - b);
  return { n: o.length, p50: percentile(o, 50), p99: percentile(o, 99), max: o[o.length - 1] ?? Number.NaN };
};

/** A loop one request after another, its latencies filed under the phase the bench is in. */
function emLaco(fase: () => string, uma: () => Promise<void>) {
  const tempos = new Map<string, number[]>();
  let parar = false;
  const laco = (async () => {
    // The bench's connections close when it ends: a loop still running then stops quietly.
    while (!parar) {
      const f = fase();
      const t = performance.now();
      try {
        await uma();
      } catch (error) {
        if (parar) return;
        throw error;
      }
      const lista = tempos.get(f) ?? [];
      lista.push(performance.now() - t);
      tempos.set(f, lista);
    }
  })();
  return {
    tempos,
    async parar() {
      parar = true;
      await laco;
    },
    laco,
  };
}

interface Wal {
  registros: number;
  bytes: number;
  fpi: number;
}

export async function retencao(log: (line: string) => void): Promise<string> {
  const cargaAntes = loadavg()[0] ?? 0;
  const admin = await pg(ADMIN_URL);
  const semeada = (await admin.query('select 1 from pg_database where datname = $1', [SEMENTE])).rows.length > 0;
  if (semeada) log(`reusing the seeded ${SEMENTE}`);
  else {
    await admin.query(`create database ${SEMENTE}`);
    const url = withDatabase(ADMIN_URL, SEMENTE);
    await migrate(url, HUB_DATA_MIGRATIONS_DIR);
    const semeador = await pg(url);
    try {
      await semear(semeador, SEED, ['evento', 'entrega', 'tentativa', 'entrega_nao_concluida', 'resumo_por_hora'], log);
      await semeador.query('checkpoint');
    } finally {
      await semeador.end();
    }
  }
  await admin.query(`drop database if exists ${DATABASE} with (force)`);
  await admin.query(`create database ${DATABASE} template ${SEMENTE}`);
  const databaseUrl = withDatabase(ADMIN_URL, DATABASE);
  // A migration added since the seed (the branch's own) runs on the copy.
  await migrate(databaseUrl, HUB_DATA_MIGRATIONS_DIR);
  const client = await pg(databaseUrl);
  await client.query('create extension if not exists pg_walinspect');
  const leitor = await pg(databaseUrl);
  const publicador = await pg(databaseUrl);
  const db = createDb(databaseUrl, 2);
  const lacos: { parar(): Promise<void> }[] = [];
  try {
    const dbOid = (
      await client.query<{ oid: number }>('select oid::int from pg_database where datname = current_database()')
    ).rows[0]!.oid;
    const t0 = (
      await client.query<{ t: Date }>("select max(recebido_em) as t from evento where entidade_id <> 'pedido-bench'")
    ).rows[0]!.t;
    const contar = async () =>
      (
        await client.query<{ eventos: number; entregas: number; tentativas: number }>(
          `select (select count(*) from evento)::int as eventos, (select count(*) from entrega)::int as entregas,
                  (select count(*) from tentativa)::int as tentativas`,
        )
      ).rows[0]!;
    const tamanhos = await contar();
    log(`${tamanhos.eventos} events, ${tamanhos.entregas} deliveries, ${tamanhos.tentativas} attempts`);

    // What a publication writes: one event of a bench type, its three deliveries, now.
    const tipo = (
      await client.query<{ id: string; app: string }>(
        "select id::text, aplicativo_id::text as app from tipo_de_evento where nome = 'bench1.criado'",
      )
    ).rows[0]!;
    const assinaturas = (
      await client.query<{ id: string; assinante: string; url: string }>(
        'select id::text, aplicativo_assinante_id::text as assinante, url_de_destino as url from assinatura where tipo_de_evento_id = $1',
        [tipo.id],
      )
    ).rows;
    let fase = 'before';
    const pagina = sqlDaPagina({ pagina: 1, tamanho: 10 });
    const leitura = emLaco(
      () => fase,
      async () => {
        await leitor.query(pagina.text, pagina.values);
      },
    );
    const publicacao = emLaco(
      () => fase,
      async () => {
        const agora = new Date();
        const id = uuidv7();
        await publicador.query(
          SQL_DA_GRAVACAO,
          valoresDaGravacao([
            {
              evento: {
                id,
                tipoDeEventoId: tipo.id,
                versaoDoEsquema: 1,
                aplicativoPublicadorId: tipo.app,
                entidadeId: 'pedido-bench',
                ocorridoEm: agora,
                recebidoEm: agora,
                publicadoPeloEmail: null,
                dadosTexto: '{"pedido":"12345","valor":1999}',
              },
              entregas: assinaturas.map((s) => ({
                id: uuidv7(),
                eventoId: id,
                eventoRecebidoEm: agora,
                entidadeId: 'pedido-bench',
                assinaturaId: s.id,
                aplicativoAssinanteId: s.assinante,
                tipoDeEventoId: tipo.id,
                versaoDoEsquema: 1,
                urlDeDestino: s.url,
                maximoDeTentativas: 8,
              })),
              trabalhos: [],
            },
          ]),
        );
      },
    );

    lacos.push(leitura, publicacao);

    // Sessions of this database waiting on a lock, sampled every 50 ms while a pass runs.
    const amostrarTravas = () => {
      let parar = false;
      let amostras = 0;
      let comEspera = 0;
      let maisLonga = 0;
      const laco = (async () => {
        const sonda = await pg(databaseUrl);
        try {
          while (!parar) {
            const { rows } = await sonda.query<{ n: number; ms: number | null }>(
              `select count(*)::int as n, max(extract(epoch from clock_timestamp() - query_start) * 1000)::float8 as ms
                 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
            );
            amostras++;
            if ((rows[0]?.n ?? 0) > 0) comEspera++;
            maisLonga = Math.max(maisLonga, rows[0]?.ms ?? 0);
            await new Promise((r) => setTimeout(r, 50));
          }
        } finally {
          await sonda.end();
        }
      })();
      return async () => {
        parar = true;
        await laco;
        return { amostras, comEspera, maisLonga };
      };
    };

    const lsn = async () => (await client.query<{ l: string }>('select pg_current_wal_lsn()::text as l')).rows[0]!.l;
    const walDoBanco = async (de: string, ate: string): Promise<Wal> => {
      // pg_walinspect reads only what is flushed.
      for (;;) {
        const { rows } = await client.query<{ ok: boolean }>('select pg_current_wal_flush_lsn() >= $1::pg_lsn as ok', [
          ate,
        ]);
        if (rows[0]?.ok) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const { rows } = await client.query<{ registros: number; bytes: number; fpi: number }>(
        `select count(*)::int as registros, coalesce(sum(record_length), 0)::float8 as bytes,
                coalesce(sum(fpi_length), 0)::float8 as fpi
           from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
          where block_ref like $3`,
        [de, ate, `%/${dbOid}/%`],
      );
      return rows[0]!;
    };
    const mortas = async () =>
      (
        await client.query<{ n: number }>(
          `select coalesce(sum(n_dead_tup), 0)::int as n from pg_stat_user_tables
            where relname in ('evento', 'entrega', 'tentativa', 'entrega_nao_concluida', 'resumo_por_hora')`,
        )
      ).rows[0]!.n;

    for (const tabela of ['evento', 'entrega', 'tentativa', 'entrega_nao_concluida', 'resumo_por_hora'])
      await client.query(`alter table ${tabela} set (autovacuum_enabled = off)`);
    const tamanhoMb = (
      await client.query<{ mb: number }>(
        `select (pg_total_relation_size('evento') + pg_total_relation_size('entrega') + pg_total_relation_size('tentativa'))::float8 / 1048576 as mb`,
      )
    ).rows[0]!.mb;
    const esperar = (ms: number) => new Promise((r) => setTimeout(r, ms));
    log(`reader and publisher alone, ${ANTES_MS / 1000} s…`);
    await esperar(ANTES_MS);

    const passes: {
      nome: string;
      eventos: number;
      outbox: number;
      ms: number;
      wal: Wal;
      mortas: number;
      travas: { amostras: number; comEspera: number; maisLonga: number };
      mantidos: number;
      vacuum: { ms: number; wal: Wal };
    }[] = [];
    for (const [i, nome] of ['day 1 (the oldest)', 'day 2 (day 1 kept what it had to)'].entries()) {
      const relogio = new Date(t0.getTime() + i * DIA_MS);
      const job = retencaoJob({
        db,
        logger: createLogger('bench', 'warn'),
        recusadosMs: 365 * DIA_MS,
        intervaloMs: 3_600_000,
        relogio: () => relogio,
      });
      log(`pass ${i + 1}: ${nome}…`);
      // A checkpoint first, as between two passes in service (an hour apart): the first change of each
      // page after it writes the whole page to the WAL, as it would there.
      fase = 'checkpoint';
      await client.query('checkpoint');
      // A temporary slot keeps the pass's WAL until it is read (a busy server recycles segments), and
      // goes with this session if the bench dies (as bench/floor/postgres.ts does).
      await client.query('select pg_create_physical_replication_slot($1, true, true)', [SLOT]);
      fase = `pass ${i + 1}`;
      const pararTravas = amostrarTravas();
      const de = await lsn();
      const t = performance.now();
      const apagados = await job.runNow();
      const ms = performance.now() - t;
      const ate = await lsn();
      fase = `after ${i + 1}`;
      const travas = await pararTravas();
      await job.stop();
      const limite = new Date(relogio.getTime() - (DIAS - 1) * DIA_MS);
      const mantidos = (
        await client.query<{ n: number }>('select count(*)::int as n from evento where recebido_em < $1', [limite])
      ).rows[0]!.n;
      await esperar(2_000); // the backends' statistics reach pg_stat_user_tables
      const wal = await walDoBanco(de, ate);
      const mortasDoPasse = await mortas();
      // What the erased rows cost afterwards: the VACUUM that autovacuum would run (off on these
      // tables here, so that it runs now and alone), every index of the tables read whole.
      fase = `vacuum ${i + 1}`;
      const deVacuum = await lsn();
      const tv = performance.now();
      await client.query('vacuum evento, entrega, tentativa, entrega_nao_concluida, resumo_por_hora');
      const vacuum = { ms: performance.now() - tv, wal: await walDoBanco(deVacuum, await lsn()) };
      await client.query('select pg_drop_replication_slot($1)', [SLOT]);
      fase = `after ${i + 1}`;
      passes.push({
        nome,
        eventos: apagados.eventos,
        outbox: apagados.outbox,
        ms,
        wal,
        mortas: mortasDoPasse,
        travas,
        mantidos,
        vacuum,
      });
      log(`  ${JSON.stringify(passes[passes.length - 1])}`);
    }
    await leitura.parar();
    await publicacao.parar();

    const mb = (b: number) => (b / 1048576).toFixed(0);
    const f1 = (n: number) => n.toFixed(1);
    const linhasPasse = passes.map(
      (p) =>
        `| ${p.nome} | ${p.eventos.toLocaleString('en')} | ${(p.ms / 1000).toFixed(1)} | ${f1((p.ms * 1000) / Math.max(1, p.eventos))} | ` +
        `${mb(p.wal.bytes)} | ${mb(p.wal.fpi)} | ${p.wal.registros.toLocaleString('en')} | ${(p.wal.bytes / Math.max(1, p.eventos) / 1024).toFixed(1)} | ` +
        `${((p.wal.bytes - p.wal.fpi) / Math.max(1, p.eventos) / 1024).toFixed(2)} | ` +
        `${p.mortas.toLocaleString('en')} | ${p.mantidos.toLocaleString('en')} | ${p.travas.comEspera}/${p.travas.amostras} (${f1(p.travas.maisLonga)} ms) | ` +
        `${(p.vacuum.ms / 1000).toFixed(1)} | ${mb(p.vacuum.wal.bytes)} |`,
    );
    const linhaLaco = (nome: string, tempos: Map<string, number[]>) => {
      const antes = resumo(tempos.get('before') ?? []);
      return ['before', 'pass 1', 'vacuum 1', 'pass 2', 'vacuum 2'].map((f) => {
        const r = resumo(tempos.get(f) ?? []);
        return `| ${nome} | ${f} | ${r.n} | ${f1(r.p50)} | ${f1(r.p99)} | ${f1(r.max)} | ${(r.p99 / antes.p99).toFixed(2)} |`;
      });
    };
    const [p1, p2] = passes as [(typeof passes)[0], (typeof passes)[0]];
    return [
      HEADING,
      '',
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.trim()}, ` +
        `Node ${process.version}, the machine's PostgreSQL 15 (shared_buffers 128 MB, full_page_writes on, shared with other ` +
        `sessions); load average before ${cargaAntes.toFixed(2)}, after ${(loadavg()[0] ?? 0).toFixed(2)}.`,
      '',
      '```',
      'BENCH_ONLY=retencao pnpm bench        # or: npx tsx bench/retention/erase-expired-day.ts [--manter]',
      '```',
      '',
      `Data: ${tamanhos.eventos.toLocaleString('en')} events over ${DIAS} days (${(tamanhos.eventos / DIAS).toLocaleString('en')} a day), ` +
        `${tamanhos.entregas.toLocaleString('en')} deliveries (3 per event, in one state per event: older than 10 minutes 97 % concluida, 2.5 % in the ` +
        `error queue, 0.5 % cancelled), ${tamanhos.tentativas.toLocaleString('en')} attempts (one per delivery that left the ` +
        `queue); evento, entrega and tentativa ${(tamanhoMb / 1024).toFixed(1)} GB with their indexes; the shapes of bench/reads/event-lists.ts; every type keeps ${DIAS - 1} days. Then hub-api's retention job ` +
        '(its code, batches of 1,000) runs two passes, the clock moved one day for the second. Beside it, one after another ' +
        "each: a reader running GET /evento's first page (sqlDaPagina) and a publisher writing one event with 3 deliveries " +
        "through publication's statement (SQL_DA_GRAVACAO). WAL: the records of pg_walinspect between the pass's start and " +
        "end that touch this database's relations; dead rows: pg_stat_user_tables of evento, entrega, tentativa, " +
        'entrega_nao_concluida, resumo_por_hora after the pass (what vacuum then has to clean); lock waits: samples of ' +
        'pg_stat_activity (every 50 ms) that found a session of this database waiting on a lock, and the longest wait seen. ' +
        'After each pass, the VACUUM of those tables (autovacuum off on them for the run, so it runs then and alone).',
      '',
      '| pass | events erased | s | µs per event | WAL MB | of it full pages MB | WAL records | WAL KiB per event | without full pages | dead rows after | events older than the limit kept | samples with a lock wait (longest) | VACUUM after, s | its WAL MB |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...linhasPasse,
      '',
      `Pass 2 cost ${(p2.ms / Math.max(1, p2.eventos) / (p1.ms / Math.max(1, p1.eventos))).toFixed(2)}× pass 1 per event erased.` +
        ' Full-page images are written by the first change of each page after a checkpoint, and checkpoints come as ' +
        'the whole shared server writes (max_wal_size), so that part varies from pass to pass; the rest is the deletions themselves.',
      '',
      '| beside the passes | phase | requests | p50 ms | p99 ms | max ms | p99 ÷ before |',
      '|---|---|---:|---:|---:|---:|---:|',
      ...linhaLaco('GET /evento first page (SQL)', leitura.tempos),
      ...linhaLaco('publication of 1 event, 3 deliveries (SQL)', publicacao.tempos),
      '',
    ].join('\n');
  } finally {
    for (const laco of lacos) await laco.parar().catch(() => undefined);
    await db.$disconnect();
    await client.end();
    await leitor.end();
    await publicador.end();
    await admin.query(`drop database if exists ${DATABASE} with (force)`);
    if (!manter) await admin.query(`drop database if exists ${SEMENTE} with (force)`);
    await admin.end();
  }
}

if (require.main === module) runSection(retencao, HEADING);

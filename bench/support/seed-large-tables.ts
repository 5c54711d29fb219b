/**
 * The seed the benches of large tables share (reads/event-lists.ts, reads/delivery-lists.ts, retention/erase-expired-day.ts): applications,
 * types with 3 subscriptions each, `eventos` events spread over `dias` days (SQL generate_series, the
 * triggers on evento counting them per hour), 3 deliveries each, with ids ordered in time like the
 * hub's UUIDv7. Each bench adds its own statements after these (`RESUMO_E_RECUSADOS`, attempts:
 * `SQL_DAS_TENTATIVAS` or its own).
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';

export const TIPOS = 20;
export const APLICATIVOS = 10;

export interface PgClient {
  connect(): Promise<void>;
  query<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
  end(): Promise<void>;
}

/** A plain pg client (pg is a dependency of packages/database, not of the benches). */
export async function pg(url: string): Promise<PgClient> {
  const { createRequire } = await import('node:module');
  const require = createRequire(path.resolve(__dirname, '../../packages/database/package.json'));
  const { Client } = require('pg') as { Client: new (o: { connectionString: string }) => PgClient };
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

export interface SementeOptions {
  eventos: number;
  dias: number;
  /** retencao_em_dias of every type. */
  retencaoEmDias: number;
  /**
   * Deliveries of the last day still retrying a little (2 % waiting for a retry, 1 % in the error
   * queue) as the panel sees them; otherwise every delivery older than 10 minutes is final.
   */
  retentativasNoUltimoDia: boolean;
}

/** Time-ordered ids like the hub's UUIDv7: 48 bits of milliseconds, version 7, random rest (this session's). */
const SQL_DO_UUID7 = `create or replace function pg_temp.uuid7(t timestamptz) returns uuid language sql volatile as $$
     select (lpad(to_hex((extract(epoch from t) * 1000)::bigint), 12, '0') || '7' ||
             substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid $$`;

/**
 * The common statements. Deliveries' situacao by age: the last 10 minutes still in the queue, then
 * final (2.5 % in the error queue, 0.5 % cancelled), the last day as `retentativasNoUltimoDia` says.
 */
export function sqlDaSemente(o: SementeOptions): string[] {
  const ultimoDia = o.retentativasNoUltimoDia
    ? `
         when e.recebido_em > now() - interval '1 day' then
           case when p < 0.95 then 'concluida' when p < 0.97 then 'aguardando_nova_tentativa'
                when p < 0.98 then 'fila_de_erro' else 'concluida' end`
    : '';
  return [
    `insert into aplicativo (id, nome, client_id, ativo, criado_em, atualizado_em)
     select gen_random_uuid(), 'Bench ' || g, 'bench_' || g, true, now(), now() from generate_series(1, ${APLICATIVOS}) g`,
    `insert into tipo_de_evento (id, nome, aplicativo_id, ativo, retencao_em_dias, criado_em, atualizado_em)
     select gen_random_uuid(), 'bench' || g || '.criado',
            (select id from aplicativo where client_id = 'bench_' || (1 + g % ${APLICATIVOS})), true, ${o.retencaoEmDias}, now(), now()
       from generate_series(1, ${TIPOS}) g`,
    `insert into versao_de_esquema (id, tipo_de_evento_id, versao, esquema, ativa, criado_em, atualizado_em)
     select gen_random_uuid(), id, 1, '{"type":"object"}', true, now(), now() from tipo_de_evento where nome like 'bench%'`,
    // Three subscribers per type, none of them its owner.
    `insert into assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino,
                           maximo_de_tentativas, ativa, criado_em, atualizado_em)
     select gen_random_uuid(), a.id, t.id, 1, 'https://recebedor.example/' || a.client_id, 8, true, now(), now()
       from generate_series(1, ${TIPOS}) g
       cross join generate_series(1, 3) k
       join tipo_de_evento t on t.nome = 'bench' || g || '.criado'
       join aplicativo a on a.client_id = 'bench_' || (1 + (g + k) % ${APLICATIVOS})`,
    SQL_DO_UUID7,
    `insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id, ocorrido_em,
                       recebido_em, dados)
     select pg_temp.uuid7(r), t.id, 1, t.aplicativo_id, 'pedido-' || (g % 200000), r, r,
            json_build_object('numero', g::text, 'valor', g % 1000)
       from generate_series(0, ${o.eventos - 1}) g
       cross join lateral (select now() - g * (interval '${o.dias} days' / ${o.eventos}) as r) tempo
       join (select id, aplicativo_id, row_number() over (order by nome) - 1 as n from tipo_de_evento
              where nome like 'bench%') t on t.n = g % ${TIPOS}`,
    `insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id, aplicativo_assinante_id,
                        tipo_de_evento_id, versao_do_esquema, url_de_destino, situacao, quantidade_de_tentativas,
                        maximo_de_tentativas, proxima_tentativa_em, entregue_em, criada_em, atualizada_em)
     select pg_temp.uuid7(e.recebido_em), e.id, e.recebido_em, e.entidade_id, s.id, s.aplicativo_assinante_id,
            e.tipo_de_evento_id, 1, s.url_de_destino, x.situacao, n.tentativas, 8, e.recebido_em,
            case when x.situacao = 'concluida' then e.recebido_em end, e.recebido_em, e.recebido_em
       from evento e
       join assinatura s on s.tipo_de_evento_id = e.tipo_de_evento_id
       -- e.id makes the subquery correlated: random() is drawn per row, not once for the statement
       cross join lateral (select random() as p, e.id) sorte
       cross join lateral (select case
         when e.recebido_em > now() - interval '10 minutes' then
           case when p < 0.5 then 'pendente' when p < 0.7 then 'em_andamento' else 'concluida' end${ultimoDia}
         else case when p < 0.97 then 'concluida' when p < 0.995 then 'fila_de_erro' else 'cancelada' end
       end as situacao) x
       -- attempts made (SQL_DAS_TENTATIVAS writes them): a concluded delivery mostly at the first,
       -- some after one or two failures; the error queue after all 8, a retry after 1 to 4; a digit
       -- of p far from the bands above chooses, so it is drawn independently of the situacao
       cross join lateral (select case x.situacao
         when 'concluida' then case when (p * 1e6)::bigint % 100 < 94 then 1
                                    when (p * 1e6)::bigint % 100 < 98 then 2 else 3 end
         when 'fila_de_erro' then 8
         when 'aguardando_nova_tentativa' then 1 + (p * 1e6)::bigint % 4
         when 'cancelada' then 1
         else 0 end as tentativas) n`,
  ];
}

/**
 * The attempts of every delivery, as the worker records them: numbers 1..quantidade_de_tentativas,
 * the first 40 ms after publication, the next ones on a backoff (5 s, 10 s, 20 s… after the one
 * before: the error queue's 8th about 10 minutes after the 1st), never in the future. Only the last
 * attempt of a concluded delivery succeeded (200, a few 202); the failures are a 500 (half), a 503
 * (a quarter) or no answer (a timeout, status_http null). About 3.7 million rows for 3,000,000
 * deliveries. Needs sqlDaSemente's session (pg_temp.uuid7).
 */
export const SQL_DAS_TENTATIVAS = `insert into tentativa (id, entrega_id, assinatura_id, numero, iniciada_em, duracao_ms, status_http,
                         sucesso, resposta, erro, cabecalhos)
     select pg_temp.uuid7(a.em), en.id, en.assinatura_id, k, a.em, a.duracao, a.status, a.sucesso,
            case when a.sucesso then 'ok' when a.status is not null then '{"erro":"indisponivel"}' end,
            case when not a.sucesso then coalesce('HTTP ' || a.status, 'ETIMEDOUT: no answer in 10000 ms') end,
            '{"webhook-id":"msg_bench","webhook-timestamp":"1","webhook-signature":"v1,abc"}'
       from entrega en
       cross join lateral generate_series(1, en.quantidade_de_tentativas) k
       -- k makes it correlated: one draw per attempt
       cross join lateral (select random() as q where k > 0) sorte
       cross join lateral (select en.situacao = 'concluida' and k = en.quantidade_de_tentativas as sucesso) s
       cross join lateral (select
         least(en.criada_em + interval '40 milliseconds' + interval '5 seconds' * (power(2, k - 1) - 1),
               now() - (en.quantidade_de_tentativas - k) * interval '1 second') as em,
         case when s.sucesso then case when q < 0.98 then 200 else 202 end
              when q < 0.5 then 500 when q < 0.75 then 503 end as status,
         s.sucesso,
         case when s.sucesso then 20 + (q * 180)::int when q < 0.75 then 5 + (q * 40)::int else 10000 end as duracao) a`;

/** The panel's summary: the tallies of the last 48 h, and 10,000 refused publications (one every 4 minutes). */
export const RESUMO_E_RECUSADOS = [
  `insert into resumo_por_hora (hora, fatia, eventos, recusados, entregas_concluidas, tentativas_com_falha)
     select date_trunc('hour', evento_recebido_em), 0, count(distinct evento_id),
            0, count(*) filter (where situacao = 'concluida'), count(*) filter (where situacao <> 'concluida')
       from entrega where evento_recebido_em > now() - interval '48 hours' group by 1
     on conflict (hora, fatia) do update
       set eventos = excluded.eventos, entregas_concluidas = excluded.entregas_concluidas,
           tentativas_com_falha = excluded.tentativas_com_falha`,
  `insert into evento_recusado (id, codigo, status_http, detalhe, recebido_em)
     select pg_temp.uuid7(now() - g * interval '4 minutes'), 'dados_invalidos', 422, 'bench', now() - g * interval '4 minutes'
       from generate_series(0, 9999) g`,
];

/**
 * The latency histograms of the last 48 h (migration 021) as dense as they get: 60 buckets (20 ms to
 * about 3.6 s) in every slice of the current and the previous hour, which the workers write, and in
 * slice 0 of the older hours, which the retention job has folded (docs/decisions/summary-and-latency.md): the summary sums 2 × 16 × 60 + 22 × 60 rows.
 */
const SEED_DAS_LATENCIAS = `insert into resumo_latencia_por_hora (hora, fatia, balde, entregas)
     select date_trunc('hour', now(), 'UTC') - h * interval '1 hour', f, b, 1 + (random() * 50)::int
       from generate_series(0, 47) h
       cross join lateral generate_series(0, case when h < 2 then 15 else 0 end) f
       cross join generate_series(35, 94) b`;

/**
 * Runs the statements on one connection (pg_temp.uuid7 lives in its session), timing each, then
 * `vacuum (analyze)` of `tabelas`: it sets the visibility map, so that index-only scans skip the
 * heap, and the planner's statistics.
 */
export async function semear(client: PgClient, sqls: string[], tabelas: string[], log: (line: string) => void) {
  const inicio = performance.now();
  await client.query('set synchronous_commit = off');
  await client.query("set maintenance_work_mem = '256MB'");
  for (const sql of sqls) {
    const t = performance.now();
    await client.query(sql);
    log(`  ${sql.trim().split('\n')[0]?.slice(0, 70)}… ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  await client.query(`vacuum (analyze) ${tabelas.join(', ')}`);
  log(`seeded in ${((performance.now() - inicio) / 1000).toFixed(0)} s`);
}

/**
 * The panel benches' database: seeded unless it holds `eventos` events already (a database kept with
 * --manter). `tentativas`: with the deliveries' attempts (SQL_DAS_TENTATIVAS, about 3.7 million rows
 * and 40 s more), which only the delivery routes' bench reads; a kept database without them gets them.
 */
export async function semearLeituras(
  client: PgClient,
  eventos: number,
  log: (line: string) => void,
  { tentativas = false }: { tentativas?: boolean } = {},
) {
  const n = (await client.query<{ n: number }>('select count(*)::int as n from evento')).rows[0]?.n ?? 0;
  if (n >= eventos) {
    log(`reusing the seeded database: ${n} events already there`);
    // the latency histograms as this version writes them (a database kept from before has none, or other ones)
    await client.query('delete from resumo_latencia_por_hora');
    await client.query(SEED_DAS_LATENCIAS);
    await client.query('vacuum (analyze) resumo_latencia_por_hora');
    const semTentativas = (await client.query('select 1 from tentativa limit 1')).rows.length === 0;
    if (tentativas && semTentativas) await semear(client, [SQL_DO_UUID7, SQL_DAS_TENTATIVAS], ['tentativa'], log);
  } else await semearDoZero(client, eventos, log, tentativas);
  await visibilidade(client, log, tentativas);
}

/**
 * A second VACUUM of the large tables, then how much of entrega the visibility map covers. Once, the
 * seed's own VACUUM left 13 % of entrega's pages not all-visible (163,455 of 186,949), and the lists'
 * counts fetched 1.4 million heap rows; a plain VACUUM afterwards marked every page. Why is not known
 * (hub-api runs beside the seed, and a transaction of its own open across the seed's commit and that
 * VACUUM would do it). On a live database autovacuum marks old pages in time: the reads are measured
 * as it would leave them. Also a kept database after the last run's reprocessing.
 */
async function visibilidade(client: PgClient, log: (line: string) => void, tentativas: boolean) {
  await client.query(`vacuum evento, entrega, entrega_nao_concluida${tentativas ? ', tentativa' : ''}`);
  const { rows } = await client.query<{ paginas: number; visiveis: number }>(
    "select relpages as paginas, relallvisible as visiveis from pg_class where relname = 'entrega'",
  );
  const [r] = rows;
  if (r) log(`entrega: ${r.visiveis} of ${r.paginas} pages all-visible after a second VACUUM`);
}

async function semearDoZero(client: PgClient, eventos: number, log: (line: string) => void, tentativas: boolean) {
  await semear(
    client,
    [
      ...sqlDaSemente({ eventos, dias: 30, retencaoEmDias: 90, retentativasNoUltimoDia: true }),
      ...(tentativas ? [SQL_DAS_TENTATIVAS] : []),
      ...RESUMO_E_RECUSADOS,
      SEED_DAS_LATENCIAS,
    ],
    [
      'evento',
      'entrega',
      ...(tentativas ? ['tentativa'] : []),
      'entrega_nao_concluida',
      'resumo_por_hora',
      'resumo_latencia_por_hora',
      'evento_recusado',
      'assinatura',
      'aplicativo',
    ],
    log,
  );
}

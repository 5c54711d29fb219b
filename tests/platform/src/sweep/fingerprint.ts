import pg from 'pg';

/** Per table: its row count and an md5 of its rows in primary-key order. */
export type Fingerprint = Record<string, string>;

const TABLES = `
  select format('%I.%I', n.nspname, c.relname) as name,
         coalesce((select string_agg('x.' || format('%I', a.attname), ', ' order by array_position(i.indkey::int2[], a.attnum))
                   from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
                   where i.indrelid = c.oid and i.indisprimary), 'x::text') as key
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema')
    and n.nspname not like 'pg_toast%'
  order by 1`;

/** Tables of the @hub/outbox shape (its column names are fixed; the table name may differ). */
const OUTBOXES = `
  select format('%I.%I', table_schema, table_name) as name from information_schema.columns
  where column_name in ('publicado_em', 'tentativas', 'routing_key')
  group by table_schema, table_name having count(*) = 3`;

/**
 * What a refusal writes by design (architecture §5: a refused publication is stored as an evento recusado
 * and counted in the summary): the log of refusals is left out, and the hourly tallies are compared
 * by everything but their count of refusals, so an event counted by a refused request is still named.
 * Also tables whose rows move without their meaning changing, compared by what they mean.
 */
const REFUSAL_RECORDS: Record<string, ((name: string) => string) | null> = {
  'public.evento_recusado': null,
  'public.resumo_por_hora': (name) =>
    `select ${pg.escapeLiteral(name)} as t, coalesce(sum(eventos), 0) || ':' || coalesce(sum(entregas_concluidas), 0) ` +
    `|| ':' || coalesce(sum(tentativas_com_falha), 0) as f from ${name}`,
  // The retention job folds an old hour's slices into one (migration 021): the same deliveries per
  // hour and bucket, in other rows. Compared by those sums.
  'public.resumo_latencia_por_hora': (name) =>
    `select ${pg.escapeLiteral(name)} as t, count(*)::text || ':' || coalesce(md5(string_agg(x::text, E'\\n' order by x)), '') as f ` +
    `from (select hora, balde, sum(entregas) from ${name} group by hora, balde) x`,
};

/**
 * Fingerprints of every table of a set of databases, read with one query per database. The list of
 * tables comes from the catalog, so a new table is covered the day a migration creates it.
 */
export class DatabaseFingerprints {
  private constructor(
    private readonly databases: { name: string; client: pg.Client; query: string; pending: string }[],
  ) {}

  static async open(urls: Record<string, string>): Promise<DatabaseFingerprints> {
    const databases = await Promise.all(
      Object.entries(urls).map(async ([name, url]) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        const tables = (await client.query<{ name: string; key: string }>(TABLES)).rows;
        const query = tables
          .filter((t) => REFUSAL_RECORDS[t.name] !== null)
          .map(
            (t) =>
              REFUSAL_RECORDS[t.name]?.(t.name) ??
              `select ${pg.escapeLiteral(t.name)} as t, count(*)::text || ':' || ` +
                `coalesce(md5(string_agg(x::text, E'\\n' order by ${t.key})), '') as f from ${t.name} x`,
          )
          .join(' union all ');
        const outboxes = (await client.query<{ name: string }>(OUTBOXES)).rows;
        const pending = outboxes
          .map((t) => `select count(*)::int as n from ${t.name} where publicado_em is null`)
          .join(' union all ');
        return { name, client, query, pending };
      }),
    );
    return new DatabaseFingerprints(databases);
  }

  async take(): Promise<Fingerprint> {
    const parts = await Promise.all(
      this.databases.map(async (d) =>
        d.query
          ? (await d.client.query<{ t: string; f: string }>(d.query)).rows.map((r) => [`${d.name}:${r.t}`, r.f])
          : [],
      ),
    );
    return Object.fromEntries(parts.flat());
  }

  /** Rows of @hub/outbox tables not yet published: a relay is about to write. */
  async pendingOutbox(): Promise<number> {
    const counts = await Promise.all(
      this.databases.map(async (d) =>
        d.pending ? (await d.client.query<{ n: number }>(d.pending)).rows.reduce((sum, r) => sum + r.n, 0) : 0,
      ),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  async close(): Promise<void> {
    await Promise.all(this.databases.map((d) => d.client.end()));
  }
}

/** The tables whose fingerprint differs. */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((name) => before[name] !== after[name]).sort();
}

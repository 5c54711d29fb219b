import { uuidv7 } from '@hub/database';
import type { Db } from './index';
import { bancoAntesDaMigracao, registroMinimo } from './migracoes.test-support';

// Migration 026 on a database that already holds attempts: it copies each one's subscription from its
// delivery into tentativa.assinatura_id, makes the column NOT NULL and indexes it, without touching
// the hourly counts of migration 024. An insert that leaves the column out (a worker of the previous
// version during a rolling deploy) still works: the trigger fills it from the delivery. The database is
// migrated up to 025 from a copy of those files, written to, then migrated to the end.
let banco: Awaited<ReturnType<typeof bancoAntesDaMigracao>>;
let db: Db;
let aplicativoId: string;
let tipoId: string;
const assinaturas: string[] = [];

beforeAll(async () => {
  banco = await bancoAntesDaMigracao('hub_tentativa_assinatura', 26);
  db = banco.db;
  const registro = await registroMinimo(
    db,
    [0, 1, 2].map((i) => `https://r.example/${i}`),
  );
  ({ aplicativoId, tipoId } = registro);
  assinaturas.push(...registro.assinaturas);
});
afterAll(() => banco?.fechar());

/**
 * An event received at `instante`, one delivery of it to each subscription given, and `n` attempts of
 * each delivery in one statement, as a worker of the previous version records them (no assinatura_id).
 */
async function tentativas(instante: string, para: string[], n: number) {
  const evento = uuidv7();
  await db.$executeRaw`insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id,
      entidade_id, ocorrido_em, recebido_em, dados)
    values (${evento}::uuid, ${tipoId}::uuid, 1, ${aplicativoId}::uuid, 'p-1', ${instante}::timestamptz,
            ${instante}::timestamptz, '{}')`;
  const entregas = para.map(() => uuidv7());
  await db.$executeRaw`insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id,
      aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, situacao, maximo_de_tentativas,
      proxima_tentativa_em, criada_em, atualizada_em)
    select e, ${evento}::uuid, ${instante}::timestamptz, 'p-1', a, ${aplicativoId}::uuid, ${tipoId}::uuid, 1,
           'https://r.example/h', 'concluida', 3, ${instante}::timestamptz, ${instante}::timestamptz, ${instante}::timestamptz
      from unnest(${entregas}::uuid[], ${para}::uuid[]) as x(e, a)`;
  await db.$executeRaw`insert into tentativa (id, entrega_id, numero, iniciada_em, duracao_ms, status_http, sucesso)
    select gen_random_uuid(), e, numero, ${instante}::timestamptz + numero * interval '1 minute', 10,
           500, numero = ${n}::int
      from unnest(${entregas}::uuid[]) as x(e) cross join generate_series(1, ${n}::int) numero`;
  return entregas;
}

/** Per subscription: the attempts of its deliveries (through entrega) and those carrying it. */
async function porAssinatura() {
  return db.$queryRaw<{ assinatura: string; pela_entrega: number; pela_coluna: number }[]>`
    select a.id::text as assinatura,
           (select count(*)::int from tentativa t join entrega e on e.id = t.entrega_id where e.assinatura_id = a.id) as pela_entrega,
           (select count(*)::int from tentativa t where t.assinatura_id = a.id) as pela_coluna
      from assinatura a order by a.id`;
}

const contagens = () =>
  db.$queryRaw<{ n: number; s: number }[]>`
    select sum(tentativas_guardadas)::int as n, sum(tentativas_com_sucesso_guardadas)::int as s from resumo_por_hora`;

test('When migration 026 runs over stored attempts, then each carries its delivery subscription, the column is NOT NULL and indexed, the hourly counts are unchanged, and an insert without it still works', async () => {
  const [a0, a1, a2] = assinaturas as [string, string, string];
  await tentativas('2041-07-01T10:15:00.000Z', [a0, a1], 3);
  await tentativas('2041-07-01T11:00:00.000Z', [a0, a2, a2], 1);
  await tentativas('2041-07-02T00:00:00.000Z', [a1], 8);
  const antes = await contagens();

  expect(await banco.migrarAteOFim()).toBeGreaterThanOrEqual(1);

  expect(await porAssinatura()).toEqual(
    [
      { assinatura: a0, pela_entrega: 4, pela_coluna: 4 },
      { assinatura: a1, pela_entrega: 11, pela_coluna: 11 },
      { assinatura: a2, pela_entrega: 2, pela_coluna: 2 },
    ].sort((x, y) => x.assinatura.localeCompare(y.assinatura)),
  );
  // the backfill updates assinatura_id only: migration 024's counts neither moved nor doubled
  expect(await contagens()).toEqual(antes);
  const [coluna] = await db.$queryRaw<{ is_nullable: string }[]>`
    select is_nullable from information_schema.columns where table_name = 'tentativa' and column_name = 'assinatura_id'`;
  expect(coluna?.is_nullable).toBe('NO');
  const [indice] = await db.$queryRaw<{ indexdef: string }[]>`
    select indexdef from pg_indexes where indexname = 'tentativa_assinatura'`;
  expect(indice?.indexdef).toContain('(assinatura_id, iniciada_em DESC, id DESC) INCLUDE (sucesso, status_http)');
  const [restricao] = await db.$queryRaw<{ n: number }[]>`
    select count(*)::int as n from pg_constraint where conname = 'tentativa_assinatura_presente'`;
  expect(restricao?.n).toBe(0);

  // a worker of the previous version: no assinatura_id in its insert, several deliveries in one statement
  const novas = await tentativas('2041-07-03T09:00:00.000Z', [a2, a0], 2);
  const [preenchidas] = await db.$queryRaw<{ n: number }[]>`
    select count(*)::int as n from tentativa t join entrega e on e.id = t.entrega_id
     where t.entrega_id = any(${novas}::uuid[]) and t.assinatura_id = e.assinatura_id`;
  expect(preenchidas?.n).toBe(4);
  // the new worker's: the column written, the trigger not called (its WHEN is false)
  const [a0Depois] = await tentativas('2041-07-03T10:00:00.000Z', [a0], 0);
  await db.$executeRaw`insert into tentativa (id, entrega_id, assinatura_id, numero, iniciada_em, duracao_ms, sucesso)
    values (gen_random_uuid(), ${a0Depois}::uuid, ${a0}::uuid, 1, '2041-07-03T10:00:01Z', 10, true)`;
  const depois = await porAssinatura();
  expect(depois.map((a) => a.pela_coluna)).toEqual(depois.map((a) => a.pela_entrega));
  expect(depois.find((a) => a.assinatura === a0)?.pela_coluna).toBe(4 + 2 + 1);
  // an attempt of a delivery that does not exist is still refused (NOT NULL, before its foreign key)
  await expect(
    db.$executeRaw`insert into tentativa (id, entrega_id, numero, iniciada_em, duracao_ms, sucesso)
      values (gen_random_uuid(), gen_random_uuid(), 1, now(), 10, true)`,
  ).rejects.toThrow();
});

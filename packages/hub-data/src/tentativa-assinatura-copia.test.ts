import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { DedicatedSession, ensureDatabase, migrate, uuidv7, withDatabase } from '@hub/database';
import { dropDatabase, unusedTestDatabase } from '@hub/database/test-support';
import { createDb, type Db, HUB_DATA_MIGRATIONS_DIR } from './index';
import { migracoesAntesDe } from './migracoes.test-support';

// Migration 026 as an operator meets it (docs/decisions/subscription-attempts.md): the process
// that ran it killed after any of its six transactions, then two instances starting at once, both
// migrating (the runner's advisory lock is a session lock, so it holds across the file's COMMITs);
// and migration 028, which keeps tentativa.assinatura_id a copy of the delivery's subscription when
// an operator moves a delivery or an attempt, and repairs the copies that diverged before it.
// A database is migrated to 025 once and copied (CREATE DATABASE … TEMPLATE) for each case.
const molde = unusedTestDatabase('hub_tentativa_copia');
const criados: string[] = [];
let ate025: string;
let ate026: string;
let arquivo026: string;

/** A fresh copy of the template (migrated to 025, with attempts of three subscriptions). */
async function copia(): Promise<{ url: string; db: Db }> {
  const nome = `${molde.name}_c${criados.length}`;
  const admin = await DedicatedSession.abrir(withDatabase(molde.url, 'postgres'), 'copia');
  try {
    await admin.consultar(`create database "${nome}" template "${molde.name}"`);
  } finally {
    await admin.fechar();
  }
  criados.push(nome);
  const url = withDatabase(molde.url, nome);
  return { url, db: createDb(url) };
}

const ids = { aplicativo: uuidv7(), tipo: uuidv7(), assinaturas: [uuidv7(), uuidv7(), uuidv7()] };

/** One event, one delivery of it per subscription given, `n` attempts each without assinatura_id. */
async function tentativas(db: Db, para: string[], n: number) {
  const evento = uuidv7();
  const instante = '2042-03-01T10:00:00.000Z';
  await db.$executeRaw`insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id,
      entidade_id, ocorrido_em, recebido_em, dados)
    values (${evento}::uuid, ${ids.tipo}::uuid, 1, ${ids.aplicativo}::uuid, 'p-1', ${instante}::timestamptz,
            ${instante}::timestamptz, '{}')`;
  const entregas = para.map(() => uuidv7());
  await db.$executeRaw`insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id,
      aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, situacao, maximo_de_tentativas,
      proxima_tentativa_em, criada_em, atualizada_em)
    select e, ${evento}::uuid, ${instante}::timestamptz, 'p-1', a, ${ids.aplicativo}::uuid, ${ids.tipo}::uuid, 1,
           'https://r.example/h', 'concluida', 3, ${instante}::timestamptz, ${instante}::timestamptz, ${instante}::timestamptz
      from unnest(${entregas}::uuid[], ${para}::uuid[]) as x(e, a)`;
  await db.$executeRaw`insert into tentativa (id, entrega_id, numero, iniciada_em, duracao_ms, status_http, sucesso)
    select gen_random_uuid(), e, numero, ${instante}::timestamptz + numero * interval '1 minute', 10, 500, false
      from unnest(${entregas}::uuid[]) as x(e) cross join generate_series(1, ${n}::int) numero`;
  return entregas;
}

/** Attempts whose copy differs from their delivery's subscription (0 when all agree). */
const divergentes = async (db: Db) =>
  (
    await db.$queryRaw<{ n: number }[]>`
      select count(*)::int as n from tentativa t join entrega e on e.id = t.entrega_id
       where t.assinatura_id is distinct from e.assinatura_id`
  )[0]!.n;

/** What migration 026 leaves when it has run to its end. */
async function esperar026Completa(db: Db) {
  expect(await divergentes(db)).toBe(0);
  const [estado] = await db.$queryRaw<{ nula: string; indice: string | null; restricao: number }[]>`
    select (select is_nullable from information_schema.columns
             where table_name = 'tentativa' and column_name = 'assinatura_id') as nula,
           (select indexdef from pg_indexes where indexname = 'tentativa_assinatura') as indice,
           (select count(*)::int from pg_constraint where conname = 'tentativa_assinatura_presente') as restricao`;
  expect(estado).toEqual({
    nula: 'NO',
    indice: expect.stringContaining('(assinatura_id, iniciada_em DESC, id DESC) INCLUDE (sucesso, status_http)'),
    restricao: 0,
  });
  const versoes = await db.$queryRaw<{ version: bigint; n: number }[]>`
    select version, count(*)::int as n from schema_migrations group by version having count(*) > 1`;
  expect(versoes).toEqual([]);
}

beforeAll(async () => {
  ate025 = await migracoesAntesDe(26);
  ate026 = await migracoesAntesDe(27);
  arquivo026 = await readFile(
    path.join(HUB_DATA_MIGRATIONS_DIR, (await readdir(HUB_DATA_MIGRATIONS_DIR)).find((n) => n.startsWith('026'))!),
    'utf8',
  );
  await ensureDatabase(molde.url);
  await migrate(molde.url, ate025);
  const db = createDb(molde.url);
  try {
    await db.$executeRaw`insert into aplicativo (id, nome, client_id, ativo, criado_em, atualizado_em)
      values (${ids.aplicativo}::uuid, 'Loja', 'loja', true, now(), now())`;
    await db.$executeRaw`insert into tipo_de_evento (id, nome, aplicativo_id, ativo, retencao_em_dias, criado_em, atualizado_em)
      values (${ids.tipo}::uuid, 'pedido.criado', ${ids.aplicativo}::uuid, true, 30, now(), now())`;
    await db.$executeRaw`insert into versao_de_esquema (id, tipo_de_evento_id, versao, esquema, ativa, criado_em, atualizado_em)
      values (${uuidv7()}::uuid, ${ids.tipo}::uuid, 1, '{}', true, now(), now())`;
    for (const [i, id] of ids.assinaturas.entries())
      await db.$executeRaw`insert into assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema,
          url_de_destino, maximo_de_tentativas, ativa, criado_em, atualizado_em)
        values (${id}::uuid, ${ids.aplicativo}::uuid, ${ids.tipo}::uuid, 1, ${`https://r.example/${i}`}, 3, true, now(), now())`;
    await tentativas(db, ids.assinaturas, 3);
    await tentativas(db, [ids.assinaturas[0]!, ids.assinaturas[0]!], 2);
  } finally {
    await db.$disconnect();
  }
}, 60_000);
afterAll(async () => {
  for (const nome of criados) await dropDatabase(nome);
  await dropDatabase(molde.name);
  for (const pasta of [ate025, ate026]) if (pasta) await rm(pasta, { recursive: true, force: true });
});

test("When migration 026 was killed after any of its six transactions, then two instances starting at once finish it, each migration recorded once, and the attempts inserted meanwhile carry their delivery's subscription", async () => {
  // the file's explicit transactions, in order (the plpgsql body's `begin` has no semicolon)
  const blocos = arquivo026.match(/^begin;[\s\S]*?^commit;$/gm) ?? [];
  expect(blocos).toHaveLength(6);
  for (let feitos = 0; feitos < blocos.length; feitos++) {
    const { url, db } = await copia();
    try {
      // by hand, as the runner sends them (simple protocol: several statements in one query)
      const sessao = await DedicatedSession.abrir(url, 'migracao-interrompida');
      try {
        for (const bloco of blocos.slice(0, feitos)) await sessao.consultar(bloco);
      } finally {
        await sessao.fechar();
      }
      // a worker of the previous version records while the service is down
      await tentativas(db, [ids.assinaturas[1]!, ids.assinaturas[2]!], 2);
      const aplicadas = await Promise.all([
        migrate(url, HUB_DATA_MIGRATIONS_DIR),
        migrate(url, HUB_DATA_MIGRATIONS_DIR),
      ]);
      const pendentes = (await readdir(HUB_DATA_MIGRATIONS_DIR)).filter((n) => Number(n.slice(0, 3)) >= 26).length;
      expect({ feitos, aplicadas: aplicadas[0]! + aplicadas[1]! }).toEqual({ feitos, aplicadas: pendentes });
      await esperar026Completa(db);
    } finally {
      await db.$disconnect();
    }
  }
}, 120_000);

test('When an operator moves a delivery to another subscription, or an attempt to another delivery, before or after migration 028, then the attempts carry their delivery subscription', async () => {
  const { url, db } = await copia();
  try {
    await migrate(url, ate026);
    const [entrega] = await tentativas(db, [ids.assinaturas[0]!], 4);
    const [outra] = await tentativas(db, [ids.assinaturas[2]!], 1);
    // before 028: the copy stays behind (what 028 repairs)
    await db.$executeRaw`update entrega set assinatura_id = ${ids.assinaturas[1]!}::uuid where id = ${entrega!}::uuid`;
    await db.$executeRaw`update tentativa set entrega_id = ${entrega!}::uuid, numero = 5 where entrega_id = ${outra!}::uuid`;
    expect(await divergentes(db)).toBe(5);

    expect(await migrate(url, HUB_DATA_MIGRATIONS_DIR)).toBeGreaterThanOrEqual(1);
    expect(await divergentes(db)).toBe(0);

    // after 028: each kind of move keeps the copy
    await db.$executeRaw`update entrega set assinatura_id = ${ids.assinaturas[2]!}::uuid where id = ${entrega!}::uuid`;
    expect(await divergentes(db)).toBe(0);
    const [terceira] = await tentativas(db, [ids.assinaturas[0]!], 1);
    await db.$executeRaw`update tentativa set entrega_id = ${terceira!}::uuid, numero = 2
      where entrega_id = ${entrega!}::uuid and numero = 5`;
    expect(await divergentes(db)).toBe(0);
    await db.$executeRaw`update tentativa set assinatura_id = ${ids.assinaturas[1]!}::uuid where entrega_id = ${terceira!}::uuid`;
    expect(await divergentes(db)).toBe(0);
    // an update that touches neither column leaves it alone; a delivery that does not exist is refused
    await db.$executeRaw`update tentativa set sucesso = true where entrega_id = ${terceira!}::uuid`;
    await expect(
      db.$executeRaw`update tentativa set entrega_id = ${uuidv7()}::uuid where entrega_id = ${terceira!}::uuid`,
    ).rejects.toThrow();
    expect(await divergentes(db)).toBe(0);
  } finally {
    await db.$disconnect();
  }
}, 60_000);

test("When a worker of the previous version records several deliveries' attempts in its one statement (update entrega … returning, then insert without assinatura_id), then each attempt carries its delivery subscription", async () => {
  const { url, db } = await copia();
  try {
    await migrate(url, HUB_DATA_MIGRATIONS_DIR);
    const entregas = [
      ...(await tentativas(db, [ids.assinaturas[0]!, ids.assinaturas[1]!], 0)),
      ...(await tentativas(db, [ids.assinaturas[2]!, ids.assinaturas[1]!], 0)),
    ];
    // the shape of the record before migration 026: the attempts come from the deliveries it updates
    const inseridas = await db.$executeRaw`
      with upd as (
        update entrega e set quantidade_de_tentativas = e.quantidade_de_tentativas + 1, atualizada_em = now()
         where e.id = any(${entregas}::uuid[])
        returning e.id, e.quantidade_de_tentativas
      )
      insert into tentativa (id, entrega_id, numero, iniciada_em, duracao_ms, status_http, sucesso)
      select gen_random_uuid(), upd.id, upd.quantidade_de_tentativas, now(), 10, 200, true from upd`;
    expect(inseridas).toBe(4);
    expect(await divergentes(db)).toBe(0);
  } finally {
    await db.$disconnect();
  }
}, 60_000);

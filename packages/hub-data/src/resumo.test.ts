import { uuidv7 } from '@hub/database';
import { createTestDatabase, type TestDatabase } from '@hub/database/test-support';
import {
  baldeDaLatencia,
  createDb,
  type Db,
  FATIAS_DO_RESUMO,
  fatiaDoResumo,
  HUB_DATA_MIGRATIONS_DIR,
  horaDoResumo,
  LIMITES_DA_LATENCIA,
  QUANTIDADE_DE_BALDES,
} from './index';

// The hour and slice the code writes to resumo_por_hora must be the ones the triggers of migrations
// 005 and 023 write for the same instant: GET /evento's total and the summary add them up together.
let database: TestDatabase;
let db: Db;
let aplicativoId: string;
let tipoId: string;

beforeAll(async () => {
  database = await createTestDatabase('hub', HUB_DATA_MIGRATIONS_DIR);
  db = createDb(database.url);
  aplicativoId = uuidv7();
  tipoId = uuidv7();
  await db.$executeRaw`insert into aplicativo (id, nome, client_id, ativo, criado_em, atualizado_em)
    values (${aplicativoId}::uuid, 'Loja', 'loja', true, now(), now())`;
  await db.$executeRaw`insert into tipo_de_evento (id, nome, aplicativo_id, ativo, retencao_em_dias, criado_em, atualizado_em)
    values (${tipoId}::uuid, 'pedido.criado', ${aplicativoId}::uuid, true, 30, now(), now())`;
  await db.$executeRaw`insert into versao_de_esquema (id, tipo_de_evento_id, versao, esquema, ativa, criado_em, atualizado_em)
    values (${uuidv7()}::uuid, ${tipoId}::uuid, 1, '{}', true, now(), now())`;
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

test('When events are stored at instants around hour boundaries, then the triggers count each in the hour horaDoResumo gives', async () => {
  const instantes = [
    '2041-03-20T00:00:00.000Z',
    '2041-03-20T00:59:59.999Z',
    '2041-03-20T01:00:00.000Z',
    '2041-03-20T01:30:00.001Z',
    '2041-03-20T23:59:59.999Z',
    '1969-12-31T23:59:59.999Z',
  ].map((s) => new Date(s));
  // In a session whose time zone is not a whole number of hours from UTC: the hour is still UTC's.
  // (The instants as ISO text: a Date parameter is sent without its zone and read in the session's.)
  await db.$transaction(async (tx) => {
    await tx.$executeRaw`set local time zone 'Asia/Kolkata'`;
    for (const instante of instantes)
      await tx.$executeRaw`insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id,
          entidade_id, ocorrido_em, recebido_em, dados)
        values (${uuidv7()}::uuid, ${tipoId}::uuid, 1, ${aplicativoId}::uuid, 'p-1', ${instante.toISOString()}::timestamptz,
                ${instante.toISOString()}::timestamptz, '{}')`;
  });
  const horas = await db.$queryRaw<{ hora: Date; n: number }[]>`
    select hora, sum(eventos_guardados)::int as n from resumo_por_hora group by hora having sum(eventos_guardados) > 0 order by hora`;

  const esperado = new Map<number, number>();
  for (const i of instantes)
    esperado.set(horaDoResumo(i).getTime(), (esperado.get(horaDoResumo(i).getTime()) ?? 0) + 1);
  expect(horas.map((h) => [h.hora.toISOString(), h.n])).toEqual(
    [...esperado].sort(([a], [b]) => a - b).map(([hora, n]) => [new Date(hora).toISOString(), n]),
  );
});

test('When the slices are read from the migrations, then they are the FATIAS_DO_RESUMO that fatiaDoResumo draws from', async () => {
  const [restricao] = await db.$queryRaw<{ def: string }[]>`
    select pg_get_constraintdef(c.oid) as def from pg_constraint c
     where c.conrelid = 'resumo_por_hora'::regclass and c.contype = 'c' and pg_get_constraintdef(c.oid) like '%fatia%'`;
  expect(restricao?.def).toBe(`CHECK (((fatia >= 0) AND (fatia <= ${FATIAS_DO_RESUMO - 1})))`);

  // Every trigger that counts in resumo_por_hora adds to its transaction's slice (migrations 023, 024, 025 and 027).
  const [fatia] = await db.$queryRaw<{ def: string }[]>`
    select pg_get_functiondef('fatia_da_transacao'::regproc) as def`;
  expect(fatia?.def.match(/txid_current\(\) % \(?(\d+)/)?.[1]).toBe(String(FATIAS_DO_RESUMO));
  const funcoes = await db.$queryRaw<{ nome: string; def: string }[]>`
    select p.proname as nome, pg_get_functiondef(p.oid) as def from pg_proc p
     where p.proname in ('eventos_guardados_somar', 'eventos_guardados_subtrair', 'eventos_guardados_mover',
                         'entrega_nao_concluida_inserir', 'entrega_nao_concluida_apagar', 'entregas_guardadas_somar_movidas',
                         'tentativas_guardadas_somar', 'tentativas_guardadas_subtrair', 'tentativas_guardadas_somar_movidas')`;
  expect(funcoes).toHaveLength(9);
  for (const f of funcoes)
    expect([f.nome, f.def.includes('fatia_da_transacao()'), /random\(\)/.test(f.def)]).toEqual([f.nome, true, false]);

  expect([fatiaDoResumo(() => 0), fatiaDoResumo(() => 0.999_999_999)]).toEqual([0, FATIAS_DO_RESUMO - 1]);
});

test('When latencies around every bucket bound go through width_bucket with LIMITES_DA_LATENCIA, then PostgreSQL picks the bucket baldeDaLatencia does, within the check of migration 021', async () => {
  const latencias = [0, 0.4, 0.999, ...LIMITES_DA_LATENCIA.flatMap((l) => [l - 1, l - 0.5, l, l + 0.5]), 2 ** 40];
  const linhas = await db.$queryRaw<{ ms: number; balde: number }[]>`
    select ms, width_bucket(greatest(0, floor(ms)), ${LIMITES_DA_LATENCIA}::float8[]) as balde
      from unnest(${latencias}::float8[]) as ms`;
  expect(linhas.map((l) => [l.ms, l.balde])).toEqual(latencias.map((ms) => [ms, baldeDaLatencia(ms)]));

  const [restricao] = await db.$queryRaw<{ def: string }[]>`
    select pg_get_constraintdef(c.oid) as def from pg_constraint c
     where c.conrelid = 'resumo_latencia_por_hora'::regclass and c.contype = 'c' and pg_get_constraintdef(c.oid) like '%balde%'`;
  expect(restricao?.def).toBe(`CHECK (((balde >= 0) AND (balde <= ${QUANTIDADE_DE_BALDES - 1})))`);
  expect(Math.max(...linhas.map((l) => l.balde))).toBe(QUANTIDADE_DE_BALDES - 1);
});

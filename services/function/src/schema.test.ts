import { uuidv7 } from '@hub/database';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import { createDb, type Db } from './db';
import { MIGRATIONS_DIR } from './start';

let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('fnschema', MIGRATIONS_DIR);
  db = createDb(database.url, 2);
});

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const instante = new Date('2026-11-21T21:00:00.123Z');

test('When every model is written and read through Prisma, then the migrated tables and the Prisma schema agree', async () => {
  const funcao = { id: uuidv7(), nome: 'Analista', criadoEm: instante, atualizadoEm: instante };
  await db.funcao.create({ data: funcao });
  expect(await db.funcao.findUniqueOrThrow({ where: { id: funcao.id } })).toEqual(funcao);
  await db.funcao.update({ where: { id: funcao.id }, data: { nome: 'Analista Sênior' } });

  const colaborador = {
    termoauthId: 'tauth-1',
    email: 'pessoa@empresa.com.br',
    nome: 'Pessoa',
    funcaoId: funcao.id,
    ativo: true,
    removido: false,
    versao: 1_790_000_000_000_000n,
    anuncio: '"termoauth_id":"tauth-1","email":"pessoa@empresa.com.br","nome":"Pessoa","ativo":true',
    atualizadoEm: instante,
  };
  await db.colaborador.create({ data: colaborador });
  expect(await db.colaborador.findUniqueOrThrow({ where: { termoauthId: 'tauth-1' } })).toEqual(colaborador);

  const outbox = {
    id: uuidv7(),
    exchange: 'hub.eventos-da-plataforma',
    routingKey: 'evento.publicar',
    messageId: uuidv7(),
    body: { id: 'x', dados: { a: [1, 'b'] } },
    headers: { 'x-origem': 'teste' },
    criadoEm: instante,
    publicadoEm: null,
    tentativas: 0,
    ultimoErro: null,
  };
  await db.outbox.create({ data: outbox });
  expect(await db.outbox.findUniqueOrThrow({ where: { id: outbox.id } })).toEqual(outbox);
  // Defaults of the SQL apply when Prisma leaves the columns out.
  const minimo = await db.outbox.create({
    data: { id: uuidv7(), exchange: 'e', routingKey: 'k', messageId: 'm', body: {} },
  });
  expect(minimo).toMatchObject({ tentativas: 0, publicadoEm: null, headers: null });
  await db.outbox.update({
    where: { id: outbox.id },
    data: { publicadoEm: instante, tentativas: 2, ultimoErro: 'falhou' },
  });
});

test('When a name repeats another without regard to case, then the database itself refuses it', async () => {
  await db.funcao.create({ data: { id: uuidv7(), nome: 'Contador', criadoEm: instante, atualizadoEm: instante } });
  await expect(
    db.funcao.create({ data: { id: uuidv7(), nome: 'CONTADOR', criadoEm: instante, atualizadoEm: instante } }),
  ).rejects.toMatchObject({
    code: 'P2002',
  });
});

test("When 'pz-x' and 'pz-x' + U+200B (or another invisible character) are inserted, then the database itself refuses the second", async () => {
  const criar = (nome: string) =>
    db.funcao.create({ data: { id: uuidv7(), nome, criadoEm: instante, atualizadoEm: instante } });
  await criar('pz-x');
  for (const nome of ['pz-x\u200B', '\u00ADPZ-X', 'pz\u180E-x', 'p\u200Cz\u2060-x\uFEFF', 'pz-\u200Dx']) {
    await expect(criar(nome)).rejects.toMatchObject({ code: 'P2002' });
  }
  expect(await db.funcao.count({ where: { nome: { contains: 'z' } } })).toBe(1);
});

test('When uuid_v7() is called in SQL, then it returns distinct version-7 uuids of the current millisecond', async () => {
  const before = Date.now();
  const rows = await db.$queryRaw<{ id: string }[]>`select uuid_v7()::text as id from generate_series(1, 1000)`;
  const after = Date.now();
  expect(new Set(rows.map((r) => r.id)).size).toBe(1000);
  for (const { id } of rows) {
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before - 5);
    expect(ms).toBeLessThanOrEqual(after + 5);
  }
});

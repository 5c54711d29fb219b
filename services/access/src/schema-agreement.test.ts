import { uuidv7 } from '@hub/database';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import { createDb, type Db } from './db';
import { MIGRATIONS_DIR } from './start';

// The SQL migrations are the source of truth; this proves the Prisma schema agrees with them.
let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('acc', MIGRATIONS_DIR);
  db = createDb(database.url);
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

it('When every model is written and read through Prisma, then the migrated tables accept and return every field', async () => {
  const now = new Date('2026-11-21T21:00:00.123Z');
  const perfil = await db.perfilDeAcesso.create({
    data: { id: uuidv7(), nome: 'P', permissoes: { monitoramento: { ler: true } }, criadoEm: now, atualizadoEm: now },
  });
  const acesso = await db.acesso.create({
    data: {
      id: uuidv7(),
      email: 'a@empresa.com.br',
      perfil: 'colaborador',
      ativo: true,
      master: false,
      termoauthId: 't',
      nome: 'A',
      perfilDeAcessoId: perfil.id,
      bloqueadoAte: now,
      ultimoLoginEm: now,
      excluidoEm: null,
      criadoEm: now,
      atualizadoEm: now,
    },
  });
  const colaborador = await db.colaborador.create({
    data: {
      termoauthId: 't',
      email: 'a@empresa.com.br',
      nome: 'A',
      funcaoId: 'f',
      ativo: true,
      removido: false,
      versao: 9_007_199_254_740_993n,
      atualizadoEm: now,
    },
  });
  expect(
    await db.acesso.findUniqueOrThrow({ where: { id: acesso.id }, include: { perfilDeAcesso: true } }),
  ).toMatchObject({
    ...acesso,
    perfilDeAcesso: { nome: 'P', permissoes: { monitoramento: { ler: true } } },
  });
  expect(await db.colaborador.findUniqueOrThrow({ where: { termoauthId: 't' } })).toEqual(colaborador);
  expect((await db.perfilDeAcesso.findUniqueOrThrow({ where: { id: perfil.id } })).criadoEm.toISOString()).toBe(
    '2026-11-21T21:00:00.123Z',
  );
});

it('When an e-mail is stored not lower-case, then the database refuses it', async () => {
  const now = new Date();
  await expect(
    db.acesso.create({
      data: {
        id: uuidv7(),
        email: 'Maiuscula@empresa.com.br',
        perfil: 'colaborador',
        ativo: true,
        master: false,
        criadoEm: now,
        atualizadoEm: now,
      },
    }),
  ).rejects.toThrow();
});

it('When two profile names differ only by case or zero-width characters, then the database itself refuses the second', async () => {
  const now = new Date();
  const perfil = (nome: string) =>
    db.perfilDeAcesso.create({ data: { id: uuidv7(), nome, permissoes: {}, criadoEm: now, atualizadoEm: now } });
  await perfil('pz-x');
  for (const nome of ['pz-x\u200B', 'PZ-X', 'p\u00ADz\u180E-\u200Dx\u2060\uFEFF']) {
    await expect(perfil(nome)).rejects.toMatchObject({ code: 'P2002' });
  }
  await perfil('pz-x2');
});

import { HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import { uuidv7 } from '@hub/database';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import { createDb, type Db, transacao } from './db';
import { aplicativosRepository } from './features/aplicativos/aplicativos.repository';
import { tiposRepository } from './features/tipos-de-evento/tipos-de-evento.repository';

// Repositories take the client or a transaction, and `transacao` joins the caller's transaction, so
// that a larger use case (a publication: event, deliveries, outbox) commits or rolls back as one.
let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('hubtx', HUB_DATA_MIGRATIONS_DIR);
  db = createDb(database.url, 4);
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

const agora = new Date();
const aplicativo = (clientId: string) => ({
  id: uuidv7(),
  nome: 'Loja',
  clientId,
  ativo: true,
  criadoEm: agora,
  atualizadoEm: agora,
});

test('When writes of two repositories run in one transaction that fails, then neither stays', async () => {
  const aplicativos = aplicativosRepository(db);
  const tipos = tiposRepository(db);
  const dono = aplicativo('tx-falha');
  const falha = transacao(db, async (tx) => {
    await aplicativos.criar(dono, tx);
    await tipos.criar(
      {
        id: uuidv7(),
        nome: 'tx.falha',
        aplicativoId: dono.id,
        ativo: true,
        retencaoEmDias: 30,
        criadoEm: agora,
        atualizadoEm: agora,
      },
      tx,
    );
    // a second application with the same client_id: P2002, and the transaction rolls back
    await aplicativos.criar(aplicativo('tx-falha'), tx);
  });
  await expect(falha).rejects.toMatchObject({ code: 'P2002' });
  expect(await aplicativos.buscar(dono.id)).toBeNull();
  expect(await tipos.buscarPorNome('tx.falha')).toBeNull();
});

test('When a use case given a transaction opens its own, then it joins the caller’s and commits with it', async () => {
  const aplicativos = aplicativosRepository(db);
  const primeiro = aplicativo('tx-junto-1');
  const segundo = aplicativo('tx-junto-2');
  await transacao(db, async (tx) => {
    await aplicativos.criar(primeiro, tx);
    await transacao(tx, async (mesma) => {
      expect(mesma === tx).toBe(true);
      await aplicativos.criar(segundo, mesma);
    });
    // not visible outside before the commit
    expect(await aplicativos.buscar(segundo.id)).toBeNull();
    expect(await aplicativos.buscar(segundo.id, tx)).not.toBeNull();
  });
  expect(await aplicativos.buscar(primeiro.id)).not.toBeNull();
  expect(await aplicativos.buscar(segundo.id)).not.toBeNull();
});

import { checkStatements, PRONTIDAO, statementsOf } from '@hub/database';
import { OUTBOX_INSERIR } from '@hub/outbox';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import * as acessos from './features/acessos/acessos.sql';
import * as colaboradores from './features/colaboradores/colaboradores.sql';
import * as perfis from './features/perfis/perfis.sql';
import { MIGRATIONS_DIR } from './start';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('acc', MIGRATIONS_DIR);
});
afterAll(() => database?.drop());

describe("access's declared statements against the migrated database", () => {
  test('When each runs, then its parameters and its columns are the types declared beside it (a migration that breaks one fails here, not in production)', async () => {
    const statements = [...statementsOf(acessos, colaboradores, perfis), PRONTIDAO, OUTBOX_INSERIR];
    expect(statements.length).toBeGreaterThan(0);
    expect(await checkStatements(database.url, statements)).toEqual([]);
  });
});

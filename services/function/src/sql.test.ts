import { checkStatements, PRONTIDAO, statementsOf } from '@hub/database';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import * as colaboradores from './features/colaboradores/colaboradores.sql';
import * as funcoes from './features/funcoes/funcoes.sql';
import { MIGRATIONS_DIR } from './start';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('fn', MIGRATIONS_DIR);
});
afterAll(() => database?.drop());

describe("function's declared statements against the migrated database", () => {
  test('When each runs, then its parameters and its columns are the types declared beside it (a migration that breaks one fails here, not in production)', async () => {
    const statements = [...statementsOf(funcoes, colaboradores), PRONTIDAO];
    expect(statements.length).toBeGreaterThan(0);
    expect(await checkStatements(database.url, statements)).toEqual([]);
  });
});

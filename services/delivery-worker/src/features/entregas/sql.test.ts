import { checkStatements, PRONTIDAO, statementsOf } from '@hub/database';
import { HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import * as circuito from '../destinos/circuito.sql';
import * as destinos from '../destinos/destinos.sql';
import * as isolamento from '../destinos/isolamento.sql';
import * as registro from './registro.sql';
import * as reivindicacao from './reivindicacao.sql';
import * as varredura from './varredura.sql';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('hub', HUB_DATA_MIGRATIONS_DIR);
});
afterAll(() => database?.drop());

describe("The worker's declared statements against the migrated database", () => {
  test('When each runs, then its parameters and its columns are the types declared beside it (a migration that breaks one fails here, not in production)', async () => {
    const statements = [...statementsOf(registro, reivindicacao, varredura, destinos, circuito, isolamento), PRONTIDAO];
    // The worker's seven statements of a delivery, and the destinations', circuit's and isolation's.
    expect(statements.length).toBeGreaterThan(7);
    expect(await checkStatements(database.url, statements)).toEqual([]);
  });
});

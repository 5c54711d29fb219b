import { checkStatements, PRONTIDAO, statementsOf } from '@hub/database';
import { HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import * as circuito from '../destinos/circuito.sql';
import * as destinos from '../destinos/destinos.sql';
import * as isolamento from '../destinos/isolamento.sql';
import { ENTREGA_REGISTRAR } from './registro.sql';
import { ENTREGA_ENVENENAR, ENTREGA_LIBERAR, ENTREGA_REIVINDICAR } from './reivindicacao.sql';
import { ENTREGA_PASSAR_A_VEZ, ENTREGA_RECOLHER_PERDIDAS, ENTREGA_RECOLHER_VEZES_PERDIDAS } from './varredura.sql';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('hub', HUB_DATA_MIGRATIONS_DIR);
});
afterAll(() => database?.drop());

describe("The worker's declared statements against the migrated database", () => {
  test('When each runs, then its parameters and its columns are the types declared beside it (a migration that breaks one fails here, not in production)', async () => {
    const statements = [
      ENTREGA_REIVINDICAR,
      ENTREGA_LIBERAR,
      ENTREGA_ENVENENAR,
      ENTREGA_REGISTRAR,
      ENTREGA_RECOLHER_PERDIDAS,
      ENTREGA_PASSAR_A_VEZ,
      ENTREGA_RECOLHER_VEZES_PERDIDAS,
      ...statementsOf(destinos, circuito, isolamento),
      PRONTIDAO,
    ];
    expect(await checkStatements(database.url, statements)).toEqual([]);
  });
});

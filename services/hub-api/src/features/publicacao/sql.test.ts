import { checkStatements, type Statement } from '@hub/database';
import { HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import { PARA_A_OUTBOX } from './despacho';
import { BUSCAR_CHAVE, GRAVACOES } from './publicacao.sql';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('hub', HUB_DATA_MIGRATIONS_DIR);
});
afterAll(() => database?.drop());

describe("Publication's hot statements against the migrated database", () => {
  test('When each runs, then its parameters and its columns are the types declared beside it (a migration that breaks one fails here, not in production)', async () => {
    const statements: Statement<object>[] = [...Object.values(GRAVACOES), BUSCAR_CHAVE, PARA_A_OUTBOX];
    expect(await checkStatements(database.url, statements)).toEqual([]);
  });

  test('When a statement names a column that does not exist or declares another type, then the check says which and how', async () => {
    const wrong = [
      { ...BUSCAR_CHAVE, name: 'teste_coluna', text: BUSCAR_CHAVE.text.replace('impressao,', 'impressao_antiga,') },
      { ...BUSCAR_CHAVE, name: 'teste_tipo', columns: { ...BUSCAR_CHAVE.columns, criadaEm: 'text' as const } },
      { ...BUSCAR_CHAVE, name: 'teste_parametros', parameters: ['text', 'uuid'] },
    ];
    expect(await checkStatements(database.url, wrong)).toEqual([
      {
        name: 'teste_coluna',
        problem: expect.stringMatching(/^does not run: column "impressao_antiga" does not exist/),
      },
      { name: 'teste_tipo', problem: expect.stringContaining('columns are (criadaEm timestamptz, eventoId uuid') },
      { name: 'teste_parametros', problem: 'parameters are (text, text), declared (text, uuid)' },
    ]);
  });
});

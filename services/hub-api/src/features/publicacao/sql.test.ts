import {
  checkStatements,
  type DeclaredStatement,
  PRONTIDAO,
  prismaStatement,
  runOnPrisma,
  type SqlPool,
  statementsOf,
} from '@hub/database';
import { OUTBOX_INSERIR } from '@hub/outbox';
import { createDb, HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import { createTestDatabase, type TestDatabase } from '@hub/testing';
import * as retencao from '../../jobs/retencao.sql';
import * as saude from '../assinante/saude.sql';
import * as assinaturas from '../assinaturas/assinaturas.sql';
import * as destinos from '../destinos/destinos.sql';
import * as entregas from '../entregas/entregas.sql';
import * as contadores from '../eventos/contadores.sql';
import * as eventos from '../eventos/eventos.sql';
import * as resumo from '../eventos/resumo.sql';
import * as fila from '../fila/fila.sql';
import * as reprocessamento from '../reprocessamento/reprocessamento.sql';
import * as lote from '../reproducao/lote.sql';
import * as tipos from '../tipos-de-evento/tipos-de-evento.sql';
import { PARA_A_OUTBOX } from './despacho';
import { BUSCAR_CHAVE, EVENTO_DETALHADO, GRAVACOES, PUBLICACAO_CONTAR_RECUSA } from './publicacao.sql';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('hub', HUB_DATA_MIGRATIONS_DIR);
});
afterAll(() => database?.drop());

/** Every declared statement of hub-api: SqlPool's (publication's hot path) and those run on Prisma. */
const STATEMENTS: DeclaredStatement[] = [
  ...Object.values(GRAVACOES),
  BUSCAR_CHAVE,
  PARA_A_OUTBOX,
  PUBLICACAO_CONTAR_RECUSA,
  PRONTIDAO,
  OUTBOX_INSERIR,
  EVENTO_DETALHADO,
  ...statementsOf(
    retencao,
    resumo,
    eventos,
    saude,
    assinaturas,
    destinos,
    entregas,
    contadores,
    fila,
    reprocessamento,
    lote,
    tipos,
  ),
];

describe("hub-api's declared statements against the migrated database", () => {
  test('When each runs, then its parameters and its columns are the types declared beside it (a migration that breaks one fails here, not in production)', async () => {
    const statements = STATEMENTS;
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

describe('Statements run on Prisma', () => {
  const ECO = prismaStatement<{ texto: string; n: bigint }>({
    name: 'teste_eco',
    text: 'select $1::text as texto, $2::int8 as n',
    parameters: ['text', 'int8'],
    columns: { texto: 'text', n: 'int8' },
  });

  test('When one runs, then its values are bound parameters (a quote is data, not SQL) and its columns come as Prisma gives them', async () => {
    const db = createDb(database.url, 1);
    try {
      const texto = "x'; drop table evento; --";
      expect(await runOnPrisma(db, ECO, [texto, 5n])).toEqual([{ texto, n: 5n }]);
      await expect(runOnPrisma(db, ECO, [texto])).rejects.toThrow('statement teste_eco takes 2 parameters, given 1');
      expect(await checkStatements(database.url, [ECO])).toEqual([]);
    } finally {
      await db.$disconnect();
    }
  });

  test('When two statements share a name, then the check says so; an insert that NULLs cannot run is still checked', async () => {
    expect(await checkStatements(database.url, [PUBLICACAO_CONTAR_RECUSA, { ...PUBLICACAO_CONTAR_RECUSA }])).toEqual([
      { name: 'publicacao_contar_recusa', problem: 'another statement has this name' },
    ]);
    const errada = { ...PUBLICACAO_CONTAR_RECUSA, name: 'teste_insercao', parameters: ['timestamptz', 'int8'] };
    expect(await checkStatements(database.url, [errada])).toEqual([
      { name: 'teste_insercao', problem: 'parameters are (timestamptz, int4), declared (timestamptz, int8)' },
    ]);
  });

  test("When a row's type does not say what Prisma gives, then it does not compile", () => {
    prismaStatement<{ n: bigint }>({
      name: 'teste_tipo_prisma',
      text: 'select 1::int8 as n',
      parameters: [],
      // @ts-expect-error: Prisma gives int4 as a number, not a bigint
      columns: { n: 'int4' },
    });
    const pool = null as unknown as SqlPool;
    // @ts-expect-error: a statement for Prisma is typed by Prisma's types, not SqlPool's
    void (() => pool.run(ECO, []));
    // @ts-expect-error: and SqlPool's statements are not run on Prisma
    void (() => runOnPrisma(createDb(database.url), BUSCAR_CHAVE, []));
    prismaStatement<{ d: Date }>({
      name: 'teste_data_prisma',
      text: 'select now()::date as d',
      parameters: [],
      columns: { d: 'date' },
    });
  });
});

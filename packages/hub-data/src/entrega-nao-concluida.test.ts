import { uuidv7 } from '@hub/database';
import { createTestDatabase, type TestDatabase } from '@hub/database/test-support';
import { createDb, type Db, HUB_DATA_MIGRATIONS_DIR } from './index';
import { registroMinimo } from './migracoes.test-support';

// Migration 018: entrega_nao_concluida is the index of where each delivery is in its life, kept by
// triggers on entrega whoever writes it; entrega itself has no index on a column the worker changes,
// so a claim and a record are HOT updates (no index entry written). Counted, not timed: PostgreSQL's
// own counters of the transaction (pg_stat_xact_user_tables).
let database: TestDatabase;
let db: Db;
let assinaturaId: string;
let aplicativoId: string;
let tipoId: string;
const agora = new Date('2026-11-25T12:00:00.000Z');

beforeAll(async () => {
  database = await createTestDatabase('hub', HUB_DATA_MIGRATIONS_DIR);
  db = createDb(database.url);
  const registro = await registroMinimo(db, ['https://r.example/h']);
  ({ aplicativoId, tipoId } = registro);
  assinaturaId = registro.assinaturas[0]!;
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

/** An event with one delivery per situacao given, inserted in one statement; their ids in that order. */
async function entregas(...situacoes: string[]): Promise<{ evento: string; ids: string[] }> {
  const evento = uuidv7();
  await db.$executeRaw`insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id,
      entidade_id, ocorrido_em, recebido_em, dados)
    values (${evento}::uuid, ${tipoId}::uuid, 1, ${aplicativoId}::uuid, 'p-1', ${agora}, ${agora}, '{}')`;
  const ids = situacoes.map(() => uuidv7());
  await db.$executeRaw`insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id,
      aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, situacao, maximo_de_tentativas,
      proxima_tentativa_em, criada_em, atualizada_em)
    select id, ${evento}::uuid, ${agora}, 'p-1', ${assinaturaId}::uuid, ${aplicativoId}::uuid, ${tipoId}::uuid, 1,
           'https://r.example/h', situacao, 3, ${agora}, ${agora}, ${agora}
      from unnest(${ids}::uuid[], ${situacoes}::text[]) as n(id, situacao)`;
  return { evento, ids };
}

interface Copia {
  entrega_id: string;
  fase: string;
  proxima_tentativa_em: Date;
}
const copias = async (ids: string[]) =>
  db.$queryRaw<Copia[]>`select entrega_id::text, fase, proxima_tentativa_em from entrega_nao_concluida
    where entrega_id = any(${ids}::uuid[]) order by entrega_id`;

/** Runs an update of entrega in a transaction; how many rows it updated and how many of them were HOT. */
async function atualizar(sql: (tx: Parameters<Parameters<Db['$transaction']>[0]>[0]) => Promise<unknown>) {
  return db.$transaction(async (tx) => {
    // The session's counters not yet reported are in the view too: the difference is this update's.
    const ler = async () =>
      (
        await tx.$queryRaw<[{ upd: number; hot: number }]>`
          select n_tup_upd::int as upd, n_tup_hot_upd::int as hot from pg_stat_xact_user_tables where relname = 'entrega'`
      )[0];
    const antes = await ler();
    await sql(tx);
    const depois = await ler();
    return { upd: depois.upd - antes.upd, hot: depois.hot - antes.hot };
  });
}

/** Every row of entrega_nao_concluida is what the triggers derive from its delivery, and nothing else is there. */
async function expectCopiaExata() {
  const diferencas = await db.$queryRaw<{ n: number }[]>`
    with esperada as (
      select id as entrega_id, fase_da_entrega(situacao) as fase,
             vencimento_da_entrega(proxima_tentativa_em, em_espera) as proxima_tentativa_em, criada_em, assinatura_id,
             tipo_de_evento_id, aplicativo_assinante_id
        from entrega where situacao <> 'concluida'
    )
    select count(*)::int as n from (
      (select * from esperada except select * from entrega_nao_concluida)
      union all
      (select * from entrega_nao_concluida except select * from esperada)
    ) d`;
  expect(diferencas[0]!.n).toBe(0);
}

describe('entrega_nao_concluida (migration 018)', () => {
  test('When deliveries are inserted in every situacao, then each one not concluded has its copy under its fase, and a concluded one none', async () => {
    const { ids } = await entregas(
      'pendente',
      'em_andamento',
      'aguardando_nova_tentativa',
      'fila_de_erro',
      'cancelada',
      'concluida',
    );
    expect((await copias(ids)).map((c) => [ids.indexOf(c.entrega_id), c.fase]).sort()).toEqual([
      [0, 'fila'],
      [1, 'fila'],
      [2, 'fila'],
      [3, 'fila_de_erro'],
      [4, 'cancelada'],
    ]);
    await expectCopiaExata();
  });

  test('When a delivery is claimed and its attempt recorded as the worker does, then both updates are HOT (no index entry) and the copy is written only when it is concluded (deleted)', async () => {
    const { ids } = await entregas('pendente', 'pendente');
    const token = uuidv7();
    const claim = await atualizar(
      (tx) => tx.$executeRaw`update entrega set situacao = 'em_andamento', reivindicacao = ${token}::uuid,
          reivindicada_ate = now() + interval '1 minute', reivindicacoes_sem_tentativa = reivindicacoes_sem_tentativa + 1,
          url_de_destino = 'https://r.example/h2', retorno_ate = null, atualizada_em = now()
        where id = any(${ids}::uuid[])`,
    );
    expect(claim).toEqual({ upd: 2, hot: 2 });
    expect((await copias(ids)).map((c) => c.fase)).toEqual(['fila', 'fila']);
    const record = await atualizar(
      (
        tx,
      ) => tx.$executeRaw`update entrega set situacao = 'concluida', quantidade_de_tentativas = quantidade_de_tentativas + 1,
          tentativas_no_ciclo_atual = tentativas_no_ciclo_atual + 1, entregue_em = now(), ultimo_erro = null,
          reivindicacao = null, reivindicada_ate = null, reivindicacoes_sem_tentativa = 0, atualizada_em = now()
        where id = any(${ids}::uuid[])`,
    );
    expect(record).toEqual({ upd: 2, hot: 2 });
    expect(await copias(ids)).toEqual([]);
    await expectCopiaExata();
  });

  test('When one statement releases a waiting delivery, claims another and cancels a third, then each copy follows its own row (migration 022: row triggers with WHEN, the claim queues none)', async () => {
    const { ids } = await entregas('pendente', 'pendente', 'pendente');
    await db.$executeRaw`update entrega set em_espera = true where id = ${ids[0]}::uuid`;
    const [espera] = await db.$queryRaw<[{ infinita: boolean }]>`
      select proxima_tentativa_em = 'infinity' as infinita from entrega_nao_concluida where entrega_id = ${ids[0]}::uuid`;
    expect(espera.infinita).toBe(true);
    await expectCopiaExata();
    const depois = new Date(agora.getTime() + 1_000);
    await db.$executeRaw`update entrega e
      set em_espera = case when e.id = ${ids[0]}::uuid then false else e.em_espera end,
          proxima_tentativa_em = case when e.id = ${ids[0]}::uuid then ${depois} else e.proxima_tentativa_em end,
          situacao = case when e.id = ${ids[1]}::uuid then 'em_andamento'
                          when e.id = ${ids[2]}::uuid then 'cancelada' else e.situacao end
      where e.id = any(${ids}::uuid[])`;
    expect((await copias(ids)).map((c) => [ids.indexOf(c.entrega_id), c.fase, c.proxima_tentativa_em]).sort()).toEqual([
      [0, 'fila', depois],
      [1, 'fila', agora],
      [2, 'cancelada', agora],
    ]);
    await expectCopiaExata();
  });

  test('When a failed attempt schedules a retry, the error queue takes one and a new cycle starts, then the copy follows the fase and the due time; a row deleted, or the table truncated, takes its copies', async () => {
    const { evento, ids } = await entregas('em_andamento', 'em_andamento');
    const depois = new Date(agora.getTime() + 60_000);
    const retry = await atualizar(
      (tx) => tx.$executeRaw`update entrega set situacao = 'aguardando_nova_tentativa', proxima_tentativa_em = ${depois}
        where id = ${ids[0]}::uuid`,
    );
    expect(retry).toEqual({ upd: 1, hot: 1 });
    await db.$executeRaw`update entrega set situacao = 'fila_de_erro' where id = ${ids[1]}::uuid`;
    expect(await copias(ids)).toEqual(
      [
        { entrega_id: ids[0], fase: 'fila', proxima_tentativa_em: depois },
        { entrega_id: ids[1], fase: 'fila_de_erro', proxima_tentativa_em: agora },
      ].sort((a, b) => a.entrega_id!.localeCompare(b.entrega_id!)),
    );
    // A concluded delivery resent (a new cycle) is back in the queue.
    await db.$executeRaw`update entrega set situacao = 'concluida' where id = ${ids[0]}::uuid`;
    await db.$executeRaw`update entrega set situacao = 'pendente', proxima_tentativa_em = ${agora} where id = ${ids[0]}::uuid`;
    expect((await copias([ids[0]!])).map((c) => c.fase)).toEqual(['fila']);
    await expectCopiaExata();
    // Retention: the event's deletion cascades to its deliveries, and their copies go with them.
    await db.$executeRaw`delete from evento where id = ${evento}::uuid`;
    expect(await copias(ids)).toEqual([]);
    await expectCopiaExata();
    const outras = await entregas('pendente');
    await db.$executeRaw`truncate entrega cascade`;
    expect(await copias(outras.ids)).toEqual([]);
    expect(await db.entregaNaoConcluida.count()).toBe(0);
  });
});

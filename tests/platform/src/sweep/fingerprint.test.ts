import { ensureDatabase } from '@hub/database';
import { dropDatabase, unusedTestDatabase } from '@hub/testing';
import pg from 'pg';
import { changedTables, DatabaseFingerprints } from './fingerprint';

const database = unusedTestDatabase('hub_fingerprint');
let client: pg.Client;
let fingerprints: DatabaseFingerprints;

beforeAll(async () => {
  await ensureDatabase(database.url);
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`
    create table item (a int, b int, nome text, primary key (b, a));
    create table sem_chave (x text);
    create table outbox (id int primary key, routing_key text, tentativas int default 0, publicado_em timestamptz);
    create table evento_recusado (id int primary key, codigo text);
    create table resumo_por_hora (hora int, fatia int, eventos int default 0, recusados int default 0,
      entregas_concluidas int default 0, tentativas_com_falha int default 0, primary key (hora, fatia));
    create table resumo_latencia_por_hora (hora int, fatia int, balde int, entregas int, primary key (hora, fatia, balde));
    insert into resumo_latencia_por_hora values (1, 3, 40, 2), (1, 7, 40, 1), (1, 7, 41, 1);
    insert into item values (1, 1, 'um'), (2, 1, 'dois');
    insert into sem_chave values ('x');`);
  fingerprints = await DatabaseFingerprints.open({ db: database.url });
});

afterAll(async () => {
  await fingerprints?.close();
  await client?.end();
  await dropDatabase(database.name);
});

test('When nothing is written, then two fingerprints agree', async () => {
  expect(changedTables(await fingerprints.take(), await fingerprints.take())).toEqual([]);
});

test('When a row changes without changing the count, then its table (and only it) is named', async () => {
  const before = await fingerprints.take();
  await client.query(`update item set nome = 'dois!' where a = 2`);
  expect(changedTables(before, await fingerprints.take())).toEqual(['db:public.item']);
});

test('When a table without a primary key gets a row, then it is named', async () => {
  const before = await fingerprints.take();
  await client.query(`insert into sem_chave values ('y')`);
  expect(changedTables(before, await fingerprints.take())).toEqual(['db:public.sem_chave']);
});

test('When an outbox row waits for its relay, then it is counted as pending until published', async () => {
  await client.query(`insert into outbox (id, routing_key) values (1, 'x')`);
  expect(await fingerprints.pendingOutbox()).toBe(1);
  await client.query('update outbox set publicado_em = now()');
  expect(await fingerprints.pendingOutbox()).toBe(0);
});

test('When a refusal is stored and counted (evento_recusado, resumo_por_hora.recusados), then no table is named; a counted event is', async () => {
  const before = await fingerprints.take();
  await client.query(`insert into evento_recusado values (1, 'dados_invalidos')`);
  await client.query('insert into resumo_por_hora (hora, fatia, recusados) values (1, 3, 1)');
  expect(changedTables(before, await fingerprints.take())).toEqual([]);
  await client.query('insert into resumo_por_hora (hora, fatia, eventos) values (1, 4, 1)');
  expect(changedTables(before, await fingerprints.take())).toEqual(['db:public.resumo_por_hora']);
});

test("When the retention job folds an hour's latency slices into one, then no table is named; one more delivery in a bucket is", async () => {
  const before = await fingerprints.take();
  await client.query(`
    with dobradas as (delete from resumo_latencia_por_hora where fatia <> 0 returning hora, balde, entregas)
    insert into resumo_latencia_por_hora select hora, 0, balde, sum(entregas) from dobradas group by hora, balde`);
  const folded = await fingerprints.take();
  expect(changedTables(before, folded)).toEqual([]);
  await client.query('update resumo_latencia_por_hora set entregas = entregas + 1 where balde = 41');
  expect(changedTables(folded, await fingerprints.take())).toEqual(['db:public.resumo_latencia_por_hora']);
});

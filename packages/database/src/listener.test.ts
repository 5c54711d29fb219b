import { createLogger } from '@hub/log';
import pg from 'pg';
import { NotificationListener } from './listener';
import { dropDatabase, unusedTestDatabase } from './test-database.test-support';

const URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const canal = (nome: string) => `teste_${nome}_${Math.random().toString(36).slice(2, 10)}`;

/** Polls without a fixed sleep. */
async function ate(condicao: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000) {
  const limite = Date.now() + timeoutMs;
  while (!(await condicao())) {
    if (Date.now() > limite) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let admin: pg.Client;
let listener: NotificationListener;
beforeEach(async () => {
  admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  listener = new NotificationListener(URL, createLogger('listener-test'), 'listener-test');
});
afterEach(async () => {
  await listener.stop();
  await admin.end();
});

test('When channels are registered before and after the start, then each handler hears its own channel’s notifications with their payload', async () => {
  const antes = canal('antes');
  const depois = canal('depois');
  const ouvidos: string[] = [];
  listener.on(antes, (p) => ouvidos.push(`${antes}:${p}`));
  await listener.start();
  listener.on(depois, (p) => ouvidos.push(`${depois}:${p}`));
  await ate(async () => {
    await admin.query('select pg_notify($1, $2)', [depois, 'x']);
    return ouvidos.includes(`${depois}:x`);
  }, 'the channel registered after the start to be listened');
  await admin.query('select pg_notify($1, $2)', [antes, 'y']);
  await ate(() => ouvidos.includes(`${antes}:y`), 'the first channel');
  expect(ouvidos.every((o) => o.startsWith(`${antes}:`) || o.startsWith(`${depois}:`))).toBe(true);
});

test('When its backend is terminated, then nothing is thrown, it reconnects with a new backend, tells every handler of the gap and hears again', async () => {
  const c = canal('volta');
  const ouvidos: (string | undefined)[] = [];
  listener.on(c, (p) => ouvidos.push(p));
  await listener.start();
  const pid = listener.backendPid;
  expect(pid).toEqual(expect.any(Number));
  await admin.query('select pg_terminate_backend($1, 10000)', [pid]);
  await ate(() => listener.listening && listener.backendPid !== pid, 'the reconnection');
  await ate(() => ouvidos.includes(undefined), 'the handler to be told of the gap');
  const ativos = await admin.query('select 1 from pg_stat_activity where pid = $1', [listener.backendPid]);
  expect(ativos.rowCount).toBe(1);
  await admin.query('select pg_notify($1, $2)', [c, 'depois']);
  await ate(() => ouvidos.includes('depois'), 'a notification after the reconnection');
});

test('When the database refuses the first connection, then start resolves and the listener connects once it can', async () => {
  // A database that does not exist yet: the connection is refused, then it is created.
  const { name: nome, url } = unusedTestDatabase('listener');
  const tarde = new NotificationListener(url, createLogger('listener-test'), 'listener-test');
  const ouvidos: (string | undefined)[] = [];
  tarde.on('registro', (p) => ouvidos.push(p));
  try {
    await tarde.start();
    expect(tarde.listening).toBe(false);
    await admin.query(`create database "${nome}"`);
    await ate(() => tarde.listening, 'the late connection');
    await ate(() => ouvidos.includes(undefined), 'the handler to be told it may have missed something');
  } finally {
    await tarde.stop();
    await dropDatabase(nome);
  }
});

test('When a channel name is not a plain identifier, then it is refused before any SQL', () => {
  expect(() => listener.on('x"; drop table y; --', () => undefined)).toThrow(/plain lower-case channel name/);
});

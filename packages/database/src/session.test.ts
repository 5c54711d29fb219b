import { createLogger } from '@hub/log';
import pg from 'pg';
import { DedicatedSession } from './session';

const URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
// A key of this file's own run: other test files may hold advisory locks on the same database.
const CHAVE = Math.floor(Math.random() * 1_000_000_000);

let admin: pg.Client;
beforeEach(async () => {
  admin = new pg.Client({ connectionString: URL });
  await admin.connect();
});
afterEach(() => admin.end());

/** Whether another session can take the lock now (taken and given back at once). */
async function livre(): Promise<boolean> {
  const { rows } = await admin.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [CHAVE]);
  if (rows[0]?.ok) await admin.query('select pg_advisory_unlock($1)', [CHAVE]);
  return rows[0]?.ok === true;
}

test('When a session holds an advisory lock, then others cannot take it until the session is closed', async () => {
  const sessao = await DedicatedSession.abrir(URL, 'session-test', createLogger('session-test'));
  await sessao.consultar('select pg_advisory_lock($1)', [CHAVE]);
  expect(await livre()).toBe(false);
  await sessao.confirmar();
  await sessao.fechar();
  expect(await livre()).toBe(true);
});

test('When its backend is terminated, then nothing is thrown unasked, the lock is free and confirmar and every statement reject', async () => {
  const sessao = await DedicatedSession.abrir(URL, 'session-test', createLogger('session-test'));
  try {
    await sessao.consultar('select pg_advisory_lock($1)', [CHAVE]);
    const ok = await admin.query('select pg_terminate_backend($1, 10000) as ok', [sessao.pid]);
    expect(ok.rows[0].ok).toBe(true);
    expect(await livre()).toBe(true);
    await expect(sessao.confirmar()).rejects.toThrow();
    await expect(sessao.consultar('select 1')).rejects.toThrow();
  } finally {
    await sessao.fechar();
  }
});

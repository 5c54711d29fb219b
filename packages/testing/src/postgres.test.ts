import path from 'node:path';
import pg from 'pg';
import { type PrivatePostgres, startPrivatePostgres } from './postgres';
import { waitFor } from './wait';

const MIGRATIONS = path.resolve(__dirname, '../../outbox/sql');

describe('startPrivatePostgres', () => {
  let server: PrivatePostgres;
  beforeAll(async () => {
    server = await startPrivatePostgres();
  }, 60_000);
  afterAll(() => server?.close());

  it('When it is restarted fast, then a connected client gets 57P01 and a new one connects, data kept', async () => {
    const db = await server.database('priv', MIGRATIONS);
    const setup = new pg.Client({ connectionString: db.url });
    await setup.connect();
    await setup.query('create table guardado (n int)');
    await setup.query('insert into guardado values (7)');
    const errors: (Error & { code?: string })[] = [];
    setup.on('error', (error) => errors.push(error));

    await server.restart('fast');

    expect((await waitFor(() => errors[0])).code).toBe('57P01');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    expect((await client.query('select n from guardado')).rows).toEqual([{ n: 7 }]);
    await client.end();
  }, 60_000);

  it('When it is stopped, then connections are refused until it starts again', async () => {
    await server.stop();
    expect(server.running).toBe(false);
    const refused = new pg.Client({ connectionString: server.url });
    await expect(refused.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await server.start();
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.end();
  }, 60_000);

  it('When it is killed, then it starts again after crash recovery', async () => {
    await server.kill();
    await server.start();
    expect(server.running).toBe(true);
    expect(server.log()).toMatch(/database system was interrupted|not properly shut down/);
  }, 60_000);
});

// bench/floor: the least work that does what the platform does for one event (issue 19), on the same
// parts: node:http, PostgreSQL (one durable transaction per group of events, one secondary index),
// RabbitMQ (a quorum queue, publisher confirms), node:crypto Ed25519. Its publication (api.ts) and
// its delivery (worker.ts) are processes of their own, as hub-api and the delivery worker are; a
// database and a RabbitMQ vhost of its own are made at start and dropped by stop().
import path from 'node:path';
import { spawnService } from '../../packages/testing/src';
import { deleteVhost, freshVhost } from '../support/local-infra';
import { pg } from './deps';

const ADMIN_URL = process.env.DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** The event and its deliveries; the one secondary index finds an event's deliveries. */
const ESQUEMA = `
  create table evento (
    id uuid primary key,
    recebido_em timestamptz not null default now(),
    corpo text not null
  );
  create table entrega (
    id uuid primary key,
    evento_id uuid not null,
    url text not null,
    situacao int2 not null default 0,
    tentativas int not null default 0,
    atualizada_em timestamptz
  );
  create index entrega_evento on entrega (evento_id);`;

export interface Floor {
  /** POST `${url}/eventos/<set>` publishes to that set's subscriptions. */
  url: string;
  /** Its database's name. */
  database: string;
  stop(): Promise<void>;
}

async function admin(sql: string) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Starts the floor with these subscription sets (set name → the URLs of its subscribers). */
export async function startFloor(assinaturas: Record<string, string[]>): Promise<Floor> {
  const nome = `hub_floor_${process.pid}`;
  const vhost = `hub-floor-${process.pid}`;
  if (!freshVhost(vhost)) throw new Error('rabbitmqctl is needed to make the floor a RabbitMQ vhost of its own');
  await admin(`drop database if exists ${nome} with (force)`);
  await admin(`create database ${nome}`);
  const databaseUrl = new URL(ADMIN_URL);
  databaseUrl.pathname = `/${nome}`;
  const banco = new pg.Client({ connectionString: databaseUrl.toString() });
  await banco.connect();
  await banco.query(ESQUEMA);
  await banco.end();
  const env = {
    FLOOR_DATABASE_URL: databaseUrl.toString(),
    FLOOR_RABBITMQ_URL: `amqp://guest:guest@127.0.0.1:5672/${vhost}`,
    FLOOR_ASSINATURAS: JSON.stringify(assinaturas),
  };
  const api = spawnService(path.join(__dirname, 'api.ts'), env);
  const worker = spawnService(path.join(__dirname, 'worker.ts'), env);
  const stop = async () => {
    await Promise.all([api.stop(), worker.stop()]);
    await admin(`drop database if exists ${nome} with (force)`);
    deleteVhost(vhost);
  };
  try {
    const url = await api.url('floor-api', 60_000);
    await worker.url('floor-worker', 60_000);
    return { url, database: nome, stop };
  } catch (error) {
    process.stderr.write(`${api.output()}\n${worker.output()}\n`);
    await stop();
    throw error;
  }
}

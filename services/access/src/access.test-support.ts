import type { Express } from 'express';
import { randomUUID } from 'node:crypto';
import { forgetOnAccessChange } from '@hub/auth';
import { Broker } from '@hub/broker';
import { declareInternalTopology, EXCHANGES } from '@hub/contracts';
import type { Permissoes } from '@hub/contracts';

import { listen } from '@hub/http';
import { createLogger } from '@hub/log';
import { createTestDatabase, type TestIdentity } from '@hub/testing';
import { createApp } from './app';
import { accessConfig } from './config';
import { createDb } from './db';
import { OutboxRelay } from '@hub/outbox';
import { type AoSincronizar, consumeColaboradores } from './jobs/colaboradores.consumer';
import { MIGRATIONS_DIR } from './start';

export interface TestAccess {
  url: string;
  /** The express app it serves (route tables in tests). */
  app: Express;
  databaseUrl: string;
  companyDomain: string;
  /** A master's token (its first request registers it). */
  masterToken(email?: string): Promise<string>;
  /** Registers an access for the e-mail with a new profile holding these permissions; its token. */
  userWith(email: string, permissoes: Permissoes): Promise<string>;
  /** Sets the access of the e-mail inactive, through PATCH /auth/{id}. */
  deactivate(email: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real access service on a free port with its own fresh database, for the tests of the other
 * services: their guards resolve permissions against it exactly as in production.
 */
export async function startAccessForTests(
  identity: TestIdentity,
  options: {
    companyDomain?: string;
    /** Consume collaborator synchronisation from this private queue. */
    syncQueue?: string;
    /** Where the private queue dead-letters what its consumer rejects (an exchange the test declared). */
    syncDeadLetterExchange?: string;
    /** Told after each synchronisation message is applied. */
    aoSincronizar?: AoSincronizar;
  } = {},
): Promise<TestAccess> {
  const database = await createTestDatabase('acc', MIGRATIONS_DIR);
  const config = accessConfig.parse({
    ...identity.env,
    COMPANY_DOMAIN: options.companyDomain ?? 'empresa.com.br',
    ACCESS_DATABASE_URL: database.url,
  });
  const logger = createLogger('access');
  const db = createDb(database.url);
  const broker = await new Broker(config.RABBITMQ_URL, logger, { name: 'test:access' }).start();
  const { app, accessCache, sincronizacao } = createApp({ config, db, logger });
  const relay = await new OutboxRelay({ databaseUrl: database.url, broker, logger, pollIntervalMs: 200 }).start();
  await forgetOnAccessChange(broker, accessCache, 'access-test');
  if (options.syncQueue) {
    const queue = options.syncQueue;
    await broker.declare(async (channel) => {
      await declareInternalTopology(channel);
      await channel.assertQueue(queue, {
        durable: false,
        autoDelete: true,
        ...(options.syncDeadLetterExchange
          ? { arguments: { 'x-dead-letter-exchange': options.syncDeadLetterExchange } }
          : {}),
      });
      await channel.bindQueue(queue, EXCHANGES.identidade, '#');
    });
    await consumeColaboradores(broker, queue, sincronizacao, options.aoSincronizar);
  }
  const server = await listen(app, 0);

  const masterToken = (email = `master@${config.COMPANY_DOMAIN}`) => identity.userToken({ email, master: true });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${await masterToken()}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = response.status === 204 ? undefined : await response.json();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
    return json as Record<string, unknown>;
  };
  const idOf = async (email: string) => {
    const found = (await call('GET', `/auth/filtro?email=${encodeURIComponent(email)}`)) as unknown as {
      id: string;
      email: string;
    }[];
    const acesso = found.find((a) => a.email === email.toLowerCase());
    if (!acesso) throw new Error(`no access for ${email}`);
    return acesso.id;
  };

  return {
    app,
    url: server.url,
    databaseUrl: database.url,
    companyDomain: config.COMPANY_DOMAIN,
    masterToken,
    userWith: async (email, permissoes) => {
      const acesso = await call('POST', '/auth', { email, perfil: 'colaborador' });
      const perfil = await call('POST', '/perfil-de-acesso', { nome: `perfil ${randomUUID()}`, permissoes });
      await call('PATCH', `/colaborador/${acesso.id}`, { perfil_de_acesso_id: perfil.id });
      return identity.userToken({ email });
    },
    deactivate: async (email) => {
      await call('PATCH', `/auth/${await idOf(email)}`, { ativo: false });
    },
    close: async () => {
      await server.close();
      await relay.stop();
      await broker.close();
      await db.$disconnect();
      await database.drop();
    },
  };
}

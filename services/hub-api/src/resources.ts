import { existsSync } from 'node:fs';
import { Broker } from '@hub/broker';
import { ConfigError } from '@hub/config';
import {
  DELIVERY_TOPOLOGY,
  declareDeliveryTopology,
  declareInternalTopology,
  migrarEscadasAntigas,
} from '@hub/contracts';
import { ensureDatabase, migrate, SqlPool } from '@hub/database';
import { HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import type { Logger } from '@hub/log';
import { KeyStore } from '@hub/signing';
import type { HubApiConfig } from './config';
import { createDb } from './db';
import { chavesPublicas } from './features/chaves/chaves-publicas';

/**
 * Where the signing keys come from. Only in LOCALHOST may a missing key file be created: elsewhere
 * a key made on the spot would sign deliveries with a key nobody published on purpose (and each
 * replica would make its own), so the start is refused naming the variables.
 */
export function keySource(config: HubApiConfig): { file: string; json?: string; create: boolean } {
  const create = config.HUB_AMBIENTE === 'LOCALHOST';
  if (!create && !config.HUB_SIGNING_KEYS?.trim() && !existsSync(config.HUB_SIGNING_KEYS_FILE))
    throw new ConfigError(
      `invalid configuration:\n  HUB_SIGNING_KEYS_FILE: the key file ${config.HUB_SIGNING_KEYS_FILE} does not exist and ` +
        `HUB_SIGNING_KEYS is not set (nor HUB_SIGNING_JWKS, the public keys alone); with HUB_AMBIENTE=${config.HUB_AMBIENTE} no key is created (docs/keys.md)`,
    );
  return { file: config.HUB_SIGNING_KEYS_FILE, json: config.HUB_SIGNING_KEYS, create };
}

async function openKeyStore(
  config: HubApiConfig,
  { create, ...source }: ReturnType<typeof keySource>,
  logger: Logger,
): Promise<KeyStore> {
  const keys = await KeyStore.open(source, {
    create,
    reloadIntervalMs: config.HUB_SIGNING_KEYS_RELOAD,
    onWarning: (message) => logger.warn(message),
    onReload: (set) => logger.info({ kids: set.keys.map((k) => `${k.kid}:${k.state}`) }, 'signing keys reloaded'),
  });
  if (keys.created)
    logger.info(
      { file: config.HUB_SIGNING_KEYS_FILE },
      'no signing key was configured: created a key file with one new key',
    );
  return keys;
}

/** The database's pools, the signing keys and the broker with its topology: what everything else uses. */
export async function openResources(config: HubApiConfig, logger: Logger) {
  // hub-api only serves the public keys: given them alone, it reads no private key at all.
  const publicas = config.HUB_SIGNING_JWKS?.trim() ? chavesPublicas(config.HUB_SIGNING_JWKS) : undefined;
  const privadas = publicas ? undefined : keySource(config);
  await ensureDatabase(config.HUB_DATABASE_URL);
  await migrate(config.HUB_DATABASE_URL, HUB_DATA_MIGRATIONS_DIR, logger);
  const keys = publicas ?? (await openKeyStore(config, privadas!, logger));

  const db = createDb(config.HUB_DATABASE_URL);
  const sql = new SqlPool(config.HUB_DATABASE_URL, 4, logger);
  // The subscribing applications' routes (/entregas, /assinaturas) on connections of their own: up to
  // HUB_CONSULTAS_DE_APLICATIVOS_EM_ANDAMENTO of them wait here, never in the panel's pool.
  const dbDeAplicativos = createDb(config.HUB_DATABASE_URL, 4);
  // The operators' lists and summaries on a replica when there is one (docs/decisions/read-replica.md).
  const dbDeLeitura = config.HUB_DATABASE_READ_URL ? createDb(config.HUB_DATABASE_READ_URL, 4) : undefined;
  const broker = await new Broker(config.RABBITMQ_URL, logger, { name: 'hub-api' }).start();
  // Delivery jobs are routable from the first publication, whether or not a worker ever ran.
  await broker.declare(declareInternalTopology);
  await broker.declare(declareDeliveryTopology);
  // What still waits in the retry queues of an earlier version moves to the one ladder (hub.atraso).
  await migrarEscadasAntigas(broker, DELIVERY_TOPOLOGY, config.DELIVERY_RETRY_DELAYS, logger);
  return { keys, db, sql, dbDeAplicativos, dbDeLeitura, broker };
}
export type Resources = Awaited<ReturnType<typeof openResources>>;

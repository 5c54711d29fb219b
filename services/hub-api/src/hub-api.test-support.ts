import { HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestAccess } from '@hub/access/testing';
import type { Ambiente } from '@hub/config';
import { createLogger } from '@hub/log';
import { generateKey, writeKeyFile } from '@hub/signing';
import { createTestDatabase, type TestIdentity, uniqueName } from '@hub/testing';
import { hubApiConfig } from './config';
import { type RunningHubApi, type StartOptions, startHubApi } from './start';

export interface TestHubApi extends RunningHubApi {
  databaseUrl: string;
  keysFile: string;
  close(): Promise<void>;
}

/**
 * The real hub-api on a free port with a fresh database and a key file of its own, its
 * permissions resolved by a test access service.
 */
export async function startHubApiForTests(
  identity: TestIdentity,
  access: TestAccess,
  options: {
    ambiente?: Ambiente;
    allowlist?: string;
    env?: Record<string, string>;
    relogio?: () => Date;
    start?: Omit<StartOptions, 'port'>;
    /** Another hub's database (a second replica of it), left in place by close(); a fresh one unless given. */
    databaseUrl?: string;
  } = {},
): Promise<TestHubApi> {
  const database = options.databaseUrl
    ? { url: options.databaseUrl, drop: async () => undefined }
    : await createTestDatabase('hub', HUB_DATA_MIGRATIONS_DIR);
  const keysDir = await mkdtemp(path.join(tmpdir(), 'hub-api-keys-'));
  const keysFile = path.join(keysDir, 'signing-keys.json');
  // Outside LOCALHOST the hub creates no key: the key is given, as a deployment must give it.
  if ((options.ambiente ?? 'LOCALHOST') !== 'LOCALHOST') await writeKeyFile(keysFile, { keys: [generateKey()] });
  const config = hubApiConfig.parse({
    ...identity.env,
    HUB_DATABASE_URL: database.url,
    ACCESS_URL: access.url,
    ACCESS_CACHE_TTL: '1s',
    HUB_AMBIENTE: options.ambiente ?? 'LOCALHOST',
    DESTINATION_ALLOWLIST: options.allowlist ?? '',
    HUB_SIGNING_KEYS_FILE: keysFile,
    HUB_SIGNING_KEYS_RELOAD: '0ms',
    // Shedding by answer time is out of the way of tests that burst on a busy machine (a test of it
    // sets its own: features/publicacao/sobrecarga.test.ts).
    HUB_PUBLICACOES_TEMPO_ALVO: '60s',
    ...options.env,
  });
  const running = await startHubApi(config, createLogger('hub-api'), {
    // Platform events only from a queue of its own: the shared one's messages belong to no test hub.
    eventosDaPlataformaQueue: uniqueName('hub-api.eventos-da-plataforma'),
    relogio: options.relogio,
    ...options.start,
    port: 0,
  });
  return {
    ...running,
    databaseUrl: database.url,
    keysFile,
    close: async () => {
      await running.stop();
      await database.drop();
      await rm(keysDir, { recursive: true, force: true });
    },
  };
}

import {
  baseConfig,
  databaseUrlFromEnv,
  durationFromEnv,
  identityConfig,
  loadConfig,
  portFromEnv,
  socketPathFromEnv,
  serviceUrlFromEnv,
} from '@hub/config';
import type { z } from 'zod';

export const functionConfig = baseConfig.extend(identityConfig.shape).extend({
  FUNCTION_PORT: portFromEnv(8082).describe('port of the function service'),
  FUNCTION_SOCKET: socketPathFromEnv().describe(
    'a Unix socket the function service also serves HTTP on, for a gateway on the same host (an absolute path); unset, none',
  ),
  FUNCTION_DATABASE_URL: databaseUrlFromEnv('hub_function').describe(
    'PostgreSQL database of the function registry (created and migrated at start)',
  ),
  ACCESS_URL: serviceUrlFromEnv('http://127.0.0.1:8081').describe('the access service, asked who each caller is'),
  ACCESS_CACHE_TTL: durationFromEnv('5s').describe('how long an answer of the access service is reused'),
  ACCESS_CACHE_STALE_IF_ERROR: durationFromEnv('60s').describe(
    "how long past ACCESS_CACHE_TTL a caller's last answer stands in while the access service cannot answer (its database failing over); a change of access announced drops it at once",
  ),
  OUTBOX_POLL_INTERVAL: durationFromEnv('1s').describe('how often the outbox relay looks without a notification'),
  OUTBOX_RETENTION: durationFromEnv('7d').describe('how long published outbox rows are kept'),
});
export type FunctionConfig = z.infer<typeof functionConfig>;

export const readConfig = () => loadConfig(functionConfig);

import {
  baseConfig,
  databaseUrlFromEnv,
  durationFromEnv,
  identityConfig,
  loadConfig,
  portFromEnv,
  socketPathFromEnv,
} from '@hub/config';
import { z } from 'zod';

export const accessConfig = baseConfig.extend(identityConfig.shape).extend({
  ACCESS_PORT: portFromEnv(8081).describe('port of the access service'),
  ACCESS_SOCKET: socketPathFromEnv().describe(
    'a Unix socket the access service also serves HTTP on, for a gateway on the same host (an absolute path); unset, none',
  ),
  ACCESS_DATABASE_URL: databaseUrlFromEnv('hub_access').describe(
    'PostgreSQL database of the access registry (created and migrated at start)',
  ),
  COMPANY_DOMAIN: z
    .string()
    .min(1)
    .default('empresa.com.br')
    .transform((v) => v.trim().toLowerCase().replace(/^@/, ''))
    .describe('accesses may only be created for e-mails of this domain'),
  ACCESS_CACHE_TTL: durationFromEnv('5s').describe("how long a caller's resolved permissions are kept"),
  ACCESS_LOGIN_TOUCH_INTERVAL: durationFromEnv('1m').describe('how often ultimo_login_em is refreshed for one access'),
  OUTBOX_POLL_INTERVAL: durationFromEnv('1s').describe(
    'how often the outbox relay of acesso.alterado looks without a notification',
  ),
  OUTBOX_RETENTION: durationFromEnv('7d').describe('how long published outbox rows are kept'),
});
export type AccessConfig = z.infer<typeof accessConfig>;

export const readConfig = () => loadConfig(accessConfig);

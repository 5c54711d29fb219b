import { baseConfig, booleanFromEnv, loadConfig, portFromEnv, serviceUrlFromEnv } from '@hub/config';
import type { z } from 'zod';

/** The demo subscriber needs only where to listen and where the hub publishes its public keys. */
export const demoReceiverConfig = baseConfig.pick({ LOG_LEVEL: true, HOST: true, SHUTDOWN_TIMEOUT: true }).extend({
  DEMO_RECEIVER_PORT: portFromEnv(8086).describe('port of the demo webhook receiver'),
  HUB_JWKS_URL: serviceUrlFromEnv('http://127.0.0.1:8083/.well-known/jwks.json').describe(
    "the hub's JWKS: the only keys this subscriber trusts; https, or http to 127.0.0.1, ::1 or localhost",
  ),
  HUB_JWKS_ALLOW_HTTP: booleanFromEnv(false).describe(
    "accept an http:// HUB_JWKS_URL on a host other than loopback (a private network such as docker compose's): anyone on the path could substitute the keys",
  ),
});
export type DemoReceiverConfig = z.infer<typeof demoReceiverConfig>;

export const readConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(demoReceiverConfig, env);

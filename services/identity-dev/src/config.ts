import { baseConfig, durationFromEnv, loadConfig, portFromEnv } from '@hub/config';
import { z } from 'zod';

export const identityDevConfig = baseConfig.extend({
  IDENTITY_DEV_PORT: portFromEnv(8085),
  IDENTITY_ISSUER: z.string().min(1).default('http://127.0.0.1:8085'),
  IDENTITY_AUDIENCE: z.string().min(1).default('event-hub'),
  IDENTITY_DEV_KEY_FILE: z
    .string()
    .default('.data/identity-dev/signing-key.json')
    .describe('private JWK; created on first start'),
  IDENTITY_DEV_TOKEN_TTL: durationFromEnv('1h'),
});
export type IdentityDevConfig = z.infer<typeof identityDevConfig>;

export const readConfig = () => loadConfig(identityDevConfig);

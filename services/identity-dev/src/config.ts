import { ambiente, baseConfig, durationFromEnv, identityConfig, loadConfig, portFromEnv } from '@hub/config';
import { z } from 'zod';

export const identityDevConfig = baseConfig.extend({
  // Said in the configuration too, so that this refusal comes with the variables that are missing.
  HUB_AMBIENTE: ambiente
    .refine((value): boolean => value !== 'PRODUCTION', {
      message: 'identity-dev is a stand-in for local runs and tests; it refuses to start with HUB_AMBIENTE=PRODUCTION',
    })
    .describe('LOCALHOST or SANDBOX'),
  IDENTITY_DEV_PORT: portFromEnv(8085).describe('port of the identity stand-in'),
  IDENTITY_ISSUER: identityConfig.shape.IDENTITY_ISSUER,
  IDENTITY_AUDIENCE: identityConfig.shape.IDENTITY_AUDIENCE,
  IDENTITY_DEV_KEY_FILE: z
    .string()
    .default('.data/identity-dev/signing-key.json')
    .describe('private JWK; created on first start'),
  IDENTITY_DEV_TOKEN_TTL: durationFromEnv('1h').describe('life of the tokens it issues'),
});
export type IdentityDevConfig = z.infer<typeof identityDevConfig>;

export const readConfig = () => loadConfig(identityDevConfig);

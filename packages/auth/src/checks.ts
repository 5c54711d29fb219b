import type { Broker } from '@hub/broker';
import type { Logger } from '@hub/log';
import { forgetOnAccessChange } from './invalidation';
import { RemoteAccessResolver } from './resolver';
import { createTokenVerifier } from './tokens';

/** The settings a service reads for its callers' tokens (`identityConfig`) and their access. */
export interface AccessCheckSettings {
  ACCESS_URL: string;
  ACCESS_CACHE_TTL: number;
  ACCESS_CACHE_STALE_IF_ERROR: number;
  IDENTITY_JWKS_URL: string;
  IDENTITY_ISSUER: string;
  IDENTITY_AUDIENCE: string;
  IDENTITY_ALGORITHMS: string[];
}

/**
 * Who may call a service: tokens checked against the identity's keys, and their access resolved by
 * the access service, cached and dropped as soon as a change of access is announced (`service`
 * names this process's queue of those announcements).
 */
export async function accessChecks(settings: AccessCheckSettings, logger: Logger, broker: Broker, service: string) {
  const resolver = new RemoteAccessResolver(
    settings.ACCESS_URL,
    logger,
    settings.ACCESS_CACHE_TTL,
    settings.ACCESS_CACHE_STALE_IF_ERROR,
  );
  await forgetOnAccessChange(broker, resolver, service);
  const verifier = createTokenVerifier({
    jwksUrl: settings.IDENTITY_JWKS_URL,
    issuer: settings.IDENTITY_ISSUER,
    audience: settings.IDENTITY_AUDIENCE,
    algorithms: settings.IDENTITY_ALGORITHMS,
  });
  return { resolver, verifier };
}

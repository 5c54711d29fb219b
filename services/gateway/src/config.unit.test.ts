import { configRefusal, requiredIn } from '@hub/config/test-support';
import { readConfig } from './config';

describe('gateway configuration', () => {
  it('When HUB_AMBIENTE is SANDBOX and nothing is set, then the start is refused naming the upstream and identity URLs and not RABBITMQ_URL, which it does not use', () => {
    const refusal = configRefusal(() => readConfig({ HUB_AMBIENTE: 'SANDBOX' }));
    // The identity settings are asked for: the gateway verifies tokens to key its rate limit.
    expect(requiredIn(refusal)).toEqual([
      'ACCESS_URL',
      'FUNCTION_URL',
      'HUB_API_URL',
      'IDENTITY_ISSUER',
      'IDENTITY_JWKS_URL',
    ]);
  });

  it('When HUB_AMBIENTE is absent, then it is PRODUCTION: the upstream URLs are asked for, not taken from this machine', () => {
    expect(() => readConfig({})).toThrow(/ACCESS_URL: required when HUB_AMBIENTE is PRODUCTION, as it is when unset/);
  });

  it('When HUB_AMBIENTE is LOCALHOST, then the upstreams are the services on this machine', () => {
    expect(readConfig({ HUB_AMBIENTE: 'LOCALHOST' })).toMatchObject({
      ACCESS_URL: 'http://127.0.0.1:8081',
      FUNCTION_URL: 'http://127.0.0.1:8082',
      HUB_API_URL: 'http://127.0.0.1:8083',
    });
  });
});

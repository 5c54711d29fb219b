import { readConfig } from './config';

describe('demo-receiver configuration', () => {
  it('When HUB_AMBIENTE is absent, then it is PRODUCTION and the JWKS URL is asked for', () => {
    expect(() => readConfig({})).toThrow(/HUB_JWKS_URL: required when HUB_AMBIENTE is PRODUCTION/);
  });

  it('When only HUB_AMBIENTE=LOCALHOST is set, then it listens on 8086 and trusts the hub-api JWKS on this machine', () => {
    expect(readConfig({ HUB_AMBIENTE: 'LOCALHOST' })).toMatchObject({
      DEMO_RECEIVER_PORT: 8086,
      HUB_JWKS_URL: 'http://127.0.0.1:8083/.well-known/jwks.json',
      LOG_LEVEL: 'info',
      HUB_JWKS_ALLOW_HTTP: false,
    });
    expect(readConfig({ HUB_AMBIENTE: 'LOCALHOST', HUB_JWKS_ALLOW_HTTP: 'true' }).HUB_JWKS_ALLOW_HTTP).toBe(true);
  });

  it('When the JWKS URL is not a URL, then loading fails naming the variable', () => {
    expect(() => readConfig({ HUB_AMBIENTE: 'LOCALHOST', HUB_JWKS_URL: 'hub' })).toThrow(/HUB_JWKS_URL/);
  });
});

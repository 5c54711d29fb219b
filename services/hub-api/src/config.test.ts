import { ConfigError, loadConfig } from '@hub/config';
import { hubApiConfig } from './config';

describe('hub-api configuration', () => {
  it('When nothing is set, then the documented defaults apply and no key is invented in the environment', () => {
    const config = loadConfig(hubApiConfig, {});
    expect(config).toMatchObject({
      HUB_API_PORT: 8083,
      HUB_DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/hub_events',
      ACCESS_URL: 'http://127.0.0.1:8081',
      ACCESS_CACHE_TTL: 5000,
      HUB_AMBIENTE: 'LOCALHOST',
      DESTINATION_ALLOWLIST: [],
      HUB_SIGNING_KEYS_FILE: '.data/hub/signing-keys.json',
      HUB_SIGNING_KEYS_RELOAD: 5000,
      IDENTITY_ALGORITHMS: ['EdDSA'],
    });
    expect(config.HUB_SIGNING_KEYS).toBeUndefined();
  });

  it('When DESTINATION_ALLOWLIST lists CIDRs, then they are parsed; a bad entry stops the start naming it', () => {
    expect(
      loadConfig(hubApiConfig, { DESTINATION_ALLOWLIST: '10.0.0.0/8, fd00::/8' }).DESTINATION_ALLOWLIST,
    ).toHaveLength(2);
    expect(() => loadConfig(hubApiConfig, { DESTINATION_ALLOWLIST: '10.0.0.0/8,intranet' })).toThrow(ConfigError);
    expect(() => loadConfig(hubApiConfig, { DESTINATION_ALLOWLIST: 'intranet' })).toThrow(
      /DESTINATION_ALLOWLIST.*"intranet"/,
    );
  });

  it('When HUB_AMBIENTE is not one of the three environments, then the start is refused', () => {
    expect(() => loadConfig(hubApiConfig, { HUB_AMBIENTE: 'STAGING' })).toThrow(/HUB_AMBIENTE/);
  });
});

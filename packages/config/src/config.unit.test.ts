import { z } from 'zod';
import { configRefusal } from './refusal.test-support';
import {
  baseConfig,
  booleanFromEnv,
  ConfigError,
  databaseUrlFromEnv,
  durationListFromEnv,
  identityConfig,
  loadConfig,
  parseDuration,
  portFromEnv,
  serviceUrlFromEnv,
  socketPathFromEnv,
} from './index';

describe('loadConfig', () => {
  const schema = z.object({
    PORT: portFromEnv(8080),
    FLAG: booleanFromEnv(true),
    DELAYS: durationListFromEnv('5s,2m'),
  });

  it('When nothing is set, then the defaults apply', () => {
    expect(loadConfig(schema, {})).toEqual({ PORT: 8080, FLAG: true, DELAYS: [5000, 120000] });
  });

  it('When a boolean says "false", then it is false', () => {
    expect(loadConfig(schema, { FLAG: 'false' }).FLAG).toBe(false);
  });

  it('When a variable is wrong, then the error names it', () => {
    expect(() => loadConfig(schema, { PORT: 'abc', FLAG: 'yes' })).toThrow(/PORT[\s\S]*FLAG/);
  });

  it('When a duration list has a bad item, then it fails', () => {
    expect(() => loadConfig(schema, { DELAYS: '5s,soon' })).toThrow(/DELAYS.*soon/);
  });

  it('When the config is loaded, then it is frozen', () => {
    expect(Object.isFrozen(loadConfig(schema, {}))).toBe(true);
  });

  it('parses every duration unit', () => {
    expect(['200ms', '5s', '2m', '1h', '1d'].map(parseDuration)).toEqual([200, 5000, 120000, 3600000, 86400000]);
  });
});

describe('development defaults', () => {
  const service = baseConfig.extend(identityConfig.shape).extend({
    X_DATABASE_URL: databaseUrlFromEnv('hub_x'),
    ACCESS_URL: serviceUrlFromEnv('http://127.0.0.1:8081'),
    PORT: portFromEnv(8080),
  });
  const deployed = {
    RABBITMQ_URL: 'amqps://hub:secret@mq.internal:5671/hub',
    IDENTITY_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
    IDENTITY_ISSUER: 'https://id.example.com',
    X_DATABASE_URL: 'postgresql://hub@db.internal:5432/hub_x',
    ACCESS_URL: 'http://access.internal:8081',
  };

  it('When HUB_AMBIENTE is LOCALHOST, then the development defaults apply', () => {
    expect(loadConfig(service, { HUB_AMBIENTE: 'LOCALHOST' })).toMatchObject({
      HUB_AMBIENTE: 'LOCALHOST',
      RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:5672',
      IDENTITY_JWKS_URL: 'http://127.0.0.1:8085/.well-known/jwks.json',
      IDENTITY_ISSUER: 'http://127.0.0.1:8085',
      X_DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/hub_x',
      ACCESS_URL: 'http://127.0.0.1:8081',
    });
  });

  it('When HUB_AMBIENTE is absent, then it is PRODUCTION: no development default applies and the error says how to ask for LOCALHOST', () => {
    const error = configRefusal(() => loadConfig(service, {}));
    const named = [
      ...error.message.matchAll(/^ {2}(\w+): required when HUB_AMBIENTE is PRODUCTION, as it is when unset/gm),
    ];
    expect(named.map((m) => m[1]).sort()).toEqual(Object.keys(deployed).sort());
    expect(error.message).toContain('set HUB_AMBIENTE=LOCALHOST on a developer machine');
    expect(loadConfig(service, deployed).HUB_AMBIENTE).toBe('PRODUCTION');
  });

  it.each(['SANDBOX', 'PRODUCTION'])(
    'When HUB_AMBIENTE is %s and nothing is set, then loading fails naming every variable that has only a development default',
    (ambiente) => {
      const error = configRefusal(() => loadConfig(service, { HUB_AMBIENTE: ambiente }));
      expect(error).toBeInstanceOf(ConfigError);
      const named = [...error.message.matchAll(/^ {2}(\w+): required when HUB_AMBIENTE is (\w+)/gm)];
      expect(named.map((m) => m[1]).sort()).toEqual(Object.keys(deployed).sort());
      expect(named.every((m) => m[2] === ambiente)).toBe(true);
    },
  );

  it('When HUB_AMBIENTE is SANDBOX and only RABBITMQ_URL is missing, then the error names RABBITMQ_URL alone', () => {
    const { RABBITMQ_URL: _, ...rest } = deployed;
    expect(() => loadConfig(service, { HUB_AMBIENTE: 'SANDBOX', ...rest })).toThrow(
      /^invalid configuration:\n {2}RABBITMQ_URL: required when HUB_AMBIENTE is SANDBOX[^\n]*$/,
    );
  });

  it('When HUB_AMBIENTE is PRODUCTION and every variable is set, then the values given are used', () => {
    expect(loadConfig(service, { HUB_AMBIENTE: 'PRODUCTION', ...deployed })).toMatchObject({
      HUB_AMBIENTE: 'PRODUCTION',
      ...deployed,
      PORT: 8080,
    });
  });

  it('When a variable is set to an empty string outside LOCALHOST, then it is wrong, not missing and not defaulted', () => {
    expect(() => loadConfig(service, { HUB_AMBIENTE: 'SANDBOX', ...deployed, RABBITMQ_URL: '' })).toThrow(
      /RABBITMQ_URL: (?!required)/,
    );
  });

  it("When RABBITMQ_URL lists a cluster's nodes separated by commas, then it is taken as given", () => {
    const nodes = 'amqps://hub:s@mq-1:5671/hub, amqps://hub:s@mq-2:5671/hub,amqps://hub:s@mq-3:5671/hub';
    expect(loadConfig(service, { HUB_AMBIENTE: 'SANDBOX', ...deployed, RABBITMQ_URL: nodes }).RABBITMQ_URL).toBe(nodes);
  });

  it.each(['amqp://mq-1:5672,', 'amqp://mq-1:5672,http://mq-2', 'amqp://mq-1:5672,mq-2:5672'])(
    'When one item of RABBITMQ_URL (%s) is not an AMQP URL, then loading fails naming RABBITMQ_URL',
    (value) => {
      expect(() => loadConfig(service, { HUB_AMBIENTE: 'SANDBOX', ...deployed, RABBITMQ_URL: value })).toThrow(
        /RABBITMQ_URL: expected amqp/,
      );
    },
  );

  it('When a schema does not read HUB_AMBIENTE and the variable is not one of the three, then loading fails naming it', () => {
    const small = z.object({ HUB_JWKS_URL: serviceUrlFromEnv('http://127.0.0.1:8083/.well-known/jwks.json') });
    expect(() => loadConfig(small, { HUB_AMBIENTE: 'staging' })).toThrow(/HUB_AMBIENTE/);
    expect(() => loadConfig(small, { HUB_AMBIENTE: 'SANDBOX' })).toThrow(/HUB_JWKS_URL: required/);
    expect(() => loadConfig(small, {})).toThrow(/HUB_JWKS_URL: required when HUB_AMBIENTE is PRODUCTION/);
    expect(loadConfig(small, { HUB_AMBIENTE: 'LOCALHOST' }).HUB_JWKS_URL).toBe(
      'http://127.0.0.1:8083/.well-known/jwks.json',
    );
  });
});

describe('socketPathFromEnv', () => {
  const schema = z.object({ X_SOCKET: socketPathFromEnv() });

  it('When it is unset, then there is no socket; when it is an absolute path, then that is the socket', () => {
    expect(loadConfig(schema, {}).X_SOCKET).toBeUndefined();
    expect(loadConfig(schema, { X_SOCKET: '/run/hub/hub-api.sock' }).X_SOCKET).toBe('/run/hub/hub-api.sock');
  });

  it.each([
    ['', 'must be an absolute path'],
    ['run/hub-api.sock', 'must be an absolute path'],
    [`/${'x'.repeat(107)}`, 'is 108 bytes long; a Unix socket path holds 107 at most'],
    ['/run/a\0b.sock', 'must not contain NUL'],
    ['/run/hub/', 'names a directory (it ends with /)'],
  ])('When it is %j, then the configuration is refused and says why', (value, why) => {
    expect(() => loadConfig(schema, { X_SOCKET: value })).toThrow(why);
  });
});

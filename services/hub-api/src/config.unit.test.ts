import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '@hub/config';
import { configRefusal, requiredIn } from '@hub/config/test-support';
import { generateKey } from '@hub/signing';
import { hubApiConfig } from './config';
import { keySource } from './start';

/** What a SANDBOX or PRODUCTION deployment sets: everything without a default elsewhere. */
const deployed = {
  RABBITMQ_URL: 'amqps://hub:secret@mq.internal:5671/hub',
  IDENTITY_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
  IDENTITY_ISSUER: 'https://id.example.com',
  HUB_DATABASE_URL: 'postgresql://hub@db.internal:5432/hub_events',
  ACCESS_URL: 'http://access.internal:8081',
  HUB_GATEWAY_URL: 'https://hub.example.com',
};

describe('hub-api configuration', () => {
  it('When only HUB_AMBIENTE=LOCALHOST is set, then the documented defaults apply and no key is invented in the environment', () => {
    const config = loadConfig(hubApiConfig, { HUB_AMBIENTE: 'LOCALHOST' });
    expect(config).toMatchObject({
      HUB_API_PORT: 8083,
      HUB_DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/hub_events',
      ACCESS_URL: 'http://127.0.0.1:8081',
      ACCESS_CACHE_TTL: 5000,
      HUB_AMBIENTE: 'LOCALHOST',
      DESTINATION_ALLOWLIST: [],
      HUB_SIGNING_KEYS_FILE: '.data/hub/signing-keys.json',
      HUB_SIGNING_KEYS_RELOAD: 5000,
      HUB_RECUSADOS_RETENCAO: 30 * 86_400_000,
      HUB_RETENCAO_INTERVALO: 60_000,
      IDENTITY_ALGORITHMS: ['EdDSA'],
    });
    expect(config.HUB_SIGNING_KEYS).toBeUndefined();
  });

  it('When DESTINATION_ALLOWLIST lists CIDRs, then they are parsed; a bad entry stops the start naming it', () => {
    expect(
      loadConfig(hubApiConfig, { HUB_AMBIENTE: 'LOCALHOST', DESTINATION_ALLOWLIST: '10.0.0.0/8, fd00::/8' })
        .DESTINATION_ALLOWLIST,
    ).toHaveLength(2);
    expect(() =>
      loadConfig(hubApiConfig, { HUB_AMBIENTE: 'LOCALHOST', DESTINATION_ALLOWLIST: '10.0.0.0/8,intranet' }),
    ).toThrow(ConfigError);
    expect(() => loadConfig(hubApiConfig, { HUB_AMBIENTE: 'LOCALHOST', DESTINATION_ALLOWLIST: 'intranet' })).toThrow(
      /DESTINATION_ALLOWLIST.*"intranet"/,
    );
  });

  it('When the replay settings are unset, then their defaults apply; a bad one stops the start naming it', () => {
    expect(loadConfig(hubApiConfig, { HUB_AMBIENTE: 'LOCALHOST' })).toMatchObject({
      REPLAY_MAX_EVENTS: 1_000_000,
      HUB_REPRODUCAO_LOTE: 500,
      HUB_REPRODUCAO_EM_FILA: 10,
      HUB_REPRODUCAO_POR_SEGUNDO: 200,
      HUB_REPRODUCAO_PAUSA: 200,
      HUB_REPRODUCAO_INTERVALO: 1000,
      HUB_REPRODUCOES_POR_MINUTO: 10,
    });
    for (const [nome, valor] of [
      ['REPLAY_MAX_EVENTS', '0'],
      ['REPLAY_MAX_EVENTS', 'muitos'],
      ['HUB_REPRODUCAO_LOTE', '10001'],
      ['HUB_REPRODUCAO_EM_FILA', '-1'],
      ['HUB_REPRODUCAO_POR_SEGUNDO', 'rapido'],
      ['HUB_REPRODUCAO_PAUSA', 'devagar'],
      ['HUB_REPRODUCOES_POR_MINUTO', '1.5'],
    ])
      expect(() => loadConfig(hubApiConfig, { HUB_AMBIENTE: 'LOCALHOST', [nome!]: valor })).toThrow(new RegExp(nome!));
  });

  it('When HUB_AMBIENTE is not one of the three environments, then the start is refused', () => {
    expect(() => loadConfig(hubApiConfig, { HUB_AMBIENTE: 'STAGING' })).toThrow(/HUB_AMBIENTE/);
  });

  it.each(['SANDBOX', 'PRODUCTION'])(
    'When HUB_AMBIENTE is %s and nothing is set, then the start is refused naming RABBITMQ_URL, the identity URLs, the database, the access service and the gateway',
    (ambiente) => {
      const refusal = configRefusal(() => loadConfig(hubApiConfig, { HUB_AMBIENTE: ambiente }));
      expect(requiredIn(refusal)).toEqual(Object.keys(deployed).sort());
    },
  );

  it('When HUB_AMBIENTE is PRODUCTION and those are set, then it loads them and keeps the defaults that are not about this machine', () => {
    expect(loadConfig(hubApiConfig, { HUB_AMBIENTE: 'PRODUCTION', ...deployed })).toMatchObject({
      ...deployed,
      HUB_API_PORT: 8083,
      IDENTITY_AUDIENCE: 'event-hub',
    });
  });
});

describe('hub-api signing keys at start', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'hub-api-key-source-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const config = (env: Record<string, string>) => loadConfig(hubApiConfig, { HUB_AMBIENTE: 'LOCALHOST', ...env });

  it('When HUB_AMBIENTE is LOCALHOST and the key file is missing, then it may be created', () => {
    const file = path.join(dir, 'keys.json');
    expect(keySource(config({ HUB_SIGNING_KEYS_FILE: file }))).toEqual({ file, json: undefined, create: true });
  });

  it.each(['SANDBOX', 'PRODUCTION'])(
    'When HUB_AMBIENTE is %s, the key file is missing and HUB_SIGNING_KEYS is not set, then the start is refused naming both and nothing is created',
    async (ambiente) => {
      const file = path.join(dir, 'keys.json');
      expect(() => keySource(config({ HUB_AMBIENTE: ambiente, ...deployed, HUB_SIGNING_KEYS_FILE: file }))).toThrow(
        new RegExp(`HUB_SIGNING_KEYS_FILE: the key file ${file} does not exist and HUB_SIGNING_KEYS is not set`),
      );
      await expect(stat(file)).rejects.toThrow(/ENOENT/);
    },
  );

  it('When HUB_AMBIENTE is SANDBOX and the key file exists, then it is used and never created', async () => {
    const file = path.join(dir, 'keys.json');
    await writeFile(file, JSON.stringify({ keys: [generateKey()] }), { mode: 0o600 });
    expect(keySource(config({ HUB_AMBIENTE: 'SANDBOX', ...deployed, HUB_SIGNING_KEYS_FILE: file }))).toMatchObject({
      file,
      create: false,
    });
  });

  it('When HUB_AMBIENTE is PRODUCTION and HUB_SIGNING_KEYS holds the keys, then no key file is needed nor created', () => {
    const json = JSON.stringify({ keys: [generateKey()] });
    const source = keySource(
      config({
        HUB_AMBIENTE: 'PRODUCTION',
        ...deployed,
        HUB_SIGNING_KEYS_FILE: path.join(dir, 'none.json'),
        HUB_SIGNING_KEYS: json,
      }),
    );
    expect(source).toMatchObject({ json, create: false });
  });
});

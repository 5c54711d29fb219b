import { generateKeyPairSync, type KeyObject, randomUUID, sign as ed25519 } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createVerifier, type VerificationErrorCode, WebhookVerificationError } from './index';

// How long a removed key keeps verifying, against a real HTTP JWKS server whose keys and answer change.
interface Key {
  kid: string;
  privateKey: KeyObject;
  jwk: { kty: string; crv: string; x: string; kid: string };
}
function generateKey(): Key {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const kid = randomUUID();
  return { kid, privateKey, jwk: { ...(publicKey.export({ format: 'jwk' }) as Key['jwk']), kid } };
}

const body = JSON.stringify({ id: 'evt-1', tipo: 'pedido.criado', assinatura_id: 'sub-a', dados: {} });
let clock: number;
/** Signed by `key` at the test's clock, so the timestamp is never what refuses it. */
function signed(key: Key, id = 'msg_1') {
  const timestamp = Math.floor(clock / 1000);
  const content = Buffer.from(`${id}.${timestamp}.${body}`);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1a,${ed25519(null, content, key.privateKey).toString('base64')}`,
    'webhook-key-id': key.kid,
  };
}

let served: Key[];
let status: number;
let hits: number;
let server: Server;
let jwksUrl: string;
beforeEach(async () => {
  clock = Date.now();
  served = [generateKey()];
  status = 200;
  hits = 0;
  server = createServer((_req, res) => {
    hits++;
    res
      .writeHead(status, { 'content-type': 'application/json', connection: 'close' })
      .end(JSON.stringify({ keys: served.map((k) => k.jwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

const verifier = (options: { maxAgeSeconds?: number; maxStaleSeconds?: number } = {}) =>
  createVerifier({ jwksUrl, expectedSubscription: 'sub-a', now: () => clock, onWarning: () => undefined, ...options });
const outcome = (promise: Promise<unknown>): Promise<VerificationErrorCode | 'jwks_unavailable' | 'verified'> =>
  promise.then(
    () => 'verified' as const,
    (error) => {
      if (error instanceof WebhookVerificationError) return error.code;
      if ((error as { code?: unknown }).code === 'jwks_unavailable') return 'jwks_unavailable';
      throw error;
    },
  );

describe('a key removed from the JWKS', () => {
  it('When a key is removed and no delivery names a new kid, then it verifies until the cached JWKS is maxAgeSeconds (300 s) old, and not after', async () => {
    const v = verifier();
    const [old] = served;
    expect(await outcome(v.verify(signed(old!), body))).toBe('verified');
    served = [generateKey()];
    clock += 299_000;
    expect(await outcome(v.verify(signed(old!), body))).toBe('verified');
    expect(hits).toBe(1);
    clock += 1_000;
    // The refetch replaces the keys whole: the old kid is gone at once, and no second fetch follows.
    expect(await outcome(v.verify(signed(old!), body))).toBe('unknown_key');
    expect(hits).toBe(2);
    expect(await outcome(v.verify(signed(served[0]!), body))).toBe('verified');
    expect(hits).toBe(2);
  });

  it('When maxAgeSeconds is set, then that is the bound', async () => {
    const v = verifier({ maxAgeSeconds: 30 });
    const [old] = served;
    await v.verify(signed(old!), body);
    served = [generateKey()];
    clock += 30_000;
    expect(await outcome(v.verify(signed(old!), body))).toBe('unknown_key');
  });

  it('When the JWKS cannot be fetched, then the cached keys serve until maxStaleSeconds (1 h), a refresh tried at most once a minute, then jwks_unavailable', async () => {
    const v = verifier();
    const [key] = served;
    await v.verify(signed(key!), body);
    status = 503;
    clock += 300_000;
    expect(await outcome(v.verify(signed(key!), body))).toBe('verified');
    expect(hits).toBe(2);
    clock += 59_000;
    expect(await outcome(v.verify(signed(key!), body))).toBe('verified');
    expect(hits).toBe(2);
    clock += 1_000;
    expect(await outcome(v.verify(signed(key!), body))).toBe('verified');
    expect(hits).toBe(3);
    clock = clock - 360_000 + 3_600_000;
    expect(await outcome(v.verify(signed(key!), body))).toBe('jwks_unavailable');
    status = 200;
    expect(await outcome(v.verify(signed(key!), body))).toBe('verified');
  });
});

describe('unknown kids', () => {
  it('When deliveries keep naming unknown kids, then the JWKS is fetched once more per refetchIntervalSeconds (60 s), however many come', async () => {
    const v = verifier();
    await v.verify(signed(served[0]!), body);
    for (let i = 0; i < 10; i += 1) {
      expect(await outcome(v.verify(signed(generateKey(), `msg_${i}`), body))).toBe('unknown_key');
      clock += 5_000;
    }
    expect(hits).toBe(2);
    clock += 10_000;
    expect(await outcome(v.verify(signed(generateKey()), body))).toBe('unknown_key');
    expect(hits).toBe(3);
  });
});

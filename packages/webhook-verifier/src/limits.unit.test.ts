import { generateKeyPairSync, type KeyObject, randomUUID, sign as ed25519 } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nacl from 'tweetnacl';
import {
  createVerifier,
  DEFAULT_MAX_BODY_BYTES,
  type VerificationErrorCode,
  verifyWithKeys,
  WebhookVerificationError,
} from './index';

// Signed with node:crypto as the hub signs (a dependency on @hub/signing would be a workspace cycle).
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
/** The hub's headers: one `v1a` signature per key, their kids in webhook-key-id. */
function signed(body: string | Uint8Array, keys: Key[], timestamp = Math.floor(Date.now() / 1000), id = 'msg_1') {
  const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(body)]);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': keys.map((k) => `v1a,${ed25519(null, content, k.privateKey).toString('base64')}`).join(' '),
    'webhook-key-id': keys.map((k) => k.kid).join(' '),
  };
}
const junk = (n: number) => Array.from({ length: n }, () => `v1a,${Buffer.alloc(64, 7).toString('base64')}`);
const codeOf = (run: () => unknown): VerificationErrorCode | 'verified' => {
  try {
    run();
    return 'verified';
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.code;
    throw error;
  }
};

const [a, b] = [generateKey(), generateKey()];
/** These checks come before or beside the subscription's: the bodies name none. */
const any = { acceptAnySubscription: true };
const jwks = { keys: [a.jwk, b.jwk] };
const entrega = (assinatura_id?: string) =>
  JSON.stringify({ id: 'evt-1', tipo: 'pedido.criado', assinatura_id, dados: { total_centavos: 1990 } });

describe('options that would switch a check off', () => {
  it.each([Number.NaN, Number.POSITIVE_INFINITY, -1])(
    'When toleranceSeconds is %s, then createVerifier and verifyWithKeys throw a TypeError instead of accepting an hour-old delivery',
    (toleranceSeconds) => {
      expect(() => createVerifier({ jwksUrl: 'http://127.0.0.1:1/jwks', toleranceSeconds, ...any })).toThrow(TypeError);
      const anHourAgo = Math.floor(Date.now() / 1000) - 3600;
      expect(() =>
        verifyWithKeys(signed(entrega(), [a], anHourAgo), entrega(), jwks, { toleranceSeconds, ...any }),
      ).toThrow(TypeError);
    },
  );

  it('When another number option is NaN, Infinity or out of range, or expectedSubscription is empty, then createVerifier throws', () => {
    const jwksUrl = 'http://127.0.0.1:1/jwks';
    for (const bad of [
      { maxAgeSeconds: Number.NaN },
      { refetchIntervalSeconds: Number.POSITIVE_INFINITY },
      { timeoutSeconds: 0 },
      { maxBodyBytes: 0 },
      { maxBodyBytes: 1.5 },
      { expectedSubscription: '' },
      { expectedSubscription: [] },
    ])
      expect(() => createVerifier({ jwksUrl, ...bad })).toThrow(TypeError);
    expect(() => createVerifier({ jwksUrl, toleranceSeconds: 0, maxBodyBytes: 10 })).not.toThrow();
  });

  it('When now() gives NaN, then the verification throws instead of skipping the timestamp check', () => {
    const anHourAgo = Math.floor(Date.now() / 1000) - 3600;
    expect(() =>
      verifyWithKeys(signed(entrega(), [a], anHourAgo), entrega(), jwks, { now: () => Number.NaN, ...any }),
    ).toThrow(TypeError);
  });
});

describe('the JWKS URL', () => {
  it.each([
    'http://hub.example.com/.well-known/jwks.json',
    'http://10.0.0.5:8083/.well-known/jwks.json',
    'http://127.0.0.1.nip.io/.well-known/jwks.json',
    'ftp://hub.example.com/jwks.json',
    'hub.example.com/jwks.json',
  ])('When jwksUrl is %s, then createVerifier throws a TypeError saying https is required', (jwksUrl) => {
    expect(() => createVerifier({ jwksUrl, ...any })).toThrow(/jwksUrl must be (https|an https URL|an absolute URL)/);
  });

  it.each([
    'https://hub.example.com/.well-known/jwks.json',
    'http://127.0.0.1:8083/.well-known/jwks.json',
    'http://[::1]:8083/.well-known/jwks.json',
    'http://localhost:8083/.well-known/jwks.json',
  ])('When jwksUrl is %s (https, or http to loopback), then createVerifier accepts it', (jwksUrl) => {
    expect(() => createVerifier({ jwksUrl, ...any })).not.toThrow();
  });

  it('When allowInsecureHttpJwks is true, then an http URL on another host is accepted (a private network)', () => {
    const jwksUrl = new URL('http://hub-api:8083/.well-known/jwks.json');
    expect(() => createVerifier({ jwksUrl, allowInsecureHttpJwks: true, ...any })).not.toThrow();
  });
});

describe('the subscription is required', () => {
  const paraA = entrega('sub-a');
  const jwksUrl = 'http://127.0.0.1:1/jwks';

  it('When neither expectedSubscription nor acceptAnySubscription is given, then the delivery is not verified for anyone: verify rejects and verifyWithKeys throws a TypeError', async () => {
    const headers = signed(paraA, [a]);
    // Rejected before any key is needed: the JWKS at port 1 is never asked.
    await expect(createVerifier({ jwksUrl }).verify(headers, paraA)).rejects.toThrow(
      /expectedSubscription is required.*acceptAnySubscription: true/,
    );
    expect(() => verifyWithKeys(headers, paraA, jwks)).toThrow(TypeError);
    expect(() => verifyWithKeys(headers, paraA, jwks, {})).toThrow(/expectedSubscription is required/);
  });

  it('When acceptAnySubscription is true, then the signature alone is checked; with expectedSubscription too, createVerifier throws', () => {
    expect(verifyWithKeys(signed(paraA, [a]), paraA, jwks, any).kid).toBe(a.kid);
    expect(() => createVerifier({ jwksUrl, expectedSubscription: 'sub-a', acceptAnySubscription: true })).toThrow(
      /not both/,
    );
    expect(() => createVerifier({ jwksUrl, acceptAnySubscription: 'yes' as unknown as boolean })).toThrow(TypeError);
  });
});

describe('the cost of an unauthenticated request is bounded', () => {
  const MiB = new Uint8Array(1024 * 1024).fill(0x61);
  let calls: number;
  let spy: jest.SpyInstance;
  beforeEach(() => {
    calls = 0;
    const original = nacl.sign.detached.verify;
    spy = jest.spyOn(nacl.sign.detached, 'verify').mockImplementation((...args) => {
      calls += 1;
      return original(...args);
    });
  });
  afterEach(() => spy.mockRestore());

  it('When 10 junk signatures come with a 1 MiB body and 2 keys are trusted, then at most one check per key plus two is made (not 20)', () => {
    const headers = { ...signed(MiB, [a]), 'webhook-signature': junk(10).join(' ') };
    delete (headers as Record<string, string>)['webhook-key-id'];
    expect(codeOf(() => verifyWithKeys(headers, MiB, jwks, any))).toBe('invalid_signature');
    expect(calls).toBe(jwks.keys.length + 2);
  });

  it('When junk signatures claim a trusted kid, then that key is checked once, however many claim it', () => {
    const headers = {
      ...signed(MiB, [a]),
      'webhook-signature': junk(10).join(' '),
      'webhook-key-id': Array(10).fill(a.kid).join(' '),
    };
    expect(codeOf(() => verifyWithKeys(headers, MiB, jwks, any))).toBe('invalid_signature');
    expect(calls).toBe(1);
  });

  it('When the genuine signature comes after junk ones naming unknown kids, then webhook-key-id finds it with one check', () => {
    const genuine = signed(MiB, [b]);
    const headers = {
      ...genuine,
      'webhook-signature': [...junk(9), genuine['webhook-signature']].join(' '),
      'webhook-key-id': [...Array(9).fill('forged'), b.kid].join(' '),
    };
    expect(verifyWithKeys(headers, MiB, jwks, any).kid).toBe(b.kid);
    expect(calls).toBe(1);
  });

  it("When a verifier holds only the old key during a rotation, then the old key's signature verifies with one check", () => {
    const both = signed(entrega(), [b, a]);
    expect(verifyWithKeys(both, entrega(), { keys: [a.jwk] }, any).kid).toBe(a.kid);
    expect(calls).toBe(1);
  });

  it('When the body is larger than maxBodyBytes (default 2 MiB), then payload_too_large before any signature check', () => {
    const big = new Uint8Array(DEFAULT_MAX_BODY_BYTES + 1).fill(0x61);
    expect(codeOf(() => verifyWithKeys(signed(big, [a]), big, jwks, any))).toBe('payload_too_large');
    const text = 'é'.repeat(600_000); // 1.2 MB of UTF-8 in 600,000 UTF-16 units
    expect(codeOf(() => verifyWithKeys(signed(text, [a]), text, jwks, { maxBodyBytes: 1_000_000, ...any }))).toBe(
      'payload_too_large',
    );
    expect(calls).toBe(0);
    expect(verifyWithKeys(signed(text, [a]), text, jwks, any).kid).toBe(a.kid);
  });
});

describe('expectedSubscription', () => {
  let server: Server;
  let jwksUrl: string;
  beforeAll(async () => {
    // A connection per fetch: on a loaded machine the server's keep-alive timer (5 s) could close a
    // socket that fetch is about to reuse, and the next fetch fails with ECONNRESET.
    server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(jwks)),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => 'verified',
      (error: WebhookVerificationError) => `${error.code}: ${error.message}`,
    );

  it("When a delivery for subscription A reaches B's verifier, then subscription_mismatch naming both; A's verifier accepts it", async () => {
    const paraA = entrega('sub-a');
    const headers = signed(paraA, [a]);
    const deB = createVerifier({ jwksUrl, expectedSubscription: 'sub-b' });
    expect(await rejection(deB.verify(headers, paraA))).toBe(
      'subscription_mismatch: the delivery is for subscription sub-a, not sub-b: refused as a replay',
    );
    expect(await createVerifier({ jwksUrl, expectedSubscription: 'sub-a' }).verify(headers, paraA)).toMatchObject({
      assinatura_id: 'sub-a',
    });
    expect(() => verifyWithKeys(headers, paraA, jwks, { expectedSubscription: 'sub-b' })).toThrow(
      expect.objectContaining({ code: 'subscription_mismatch' }),
    );
    expect(verifyWithKeys(headers, paraA, jwks, { expectedSubscription: ['sub-b', 'sub-a'] }).kid).toBe(a.kid);
  });

  it("When the body names no subscription, then it is refused; per call, the expected subscription overrides the verifier's", async () => {
    const verifier = createVerifier({ jwksUrl, expectedSubscription: 'sub-a' });
    const semAssinatura = entrega();
    expect(await rejection(verifier.verify(signed(semAssinatura, [a]), semAssinatura))).toMatch(
      /^subscription_mismatch: the delivery names no subscription/,
    );
    const paraC = entrega('sub-c');
    expect(await verifier.verify(signed(paraC, [a]), paraC, { expectedSubscription: 'sub-c' })).toMatchObject({
      assinatura_id: 'sub-c',
    });
    expect(await rejection(verifier.verify(signed(paraC, [a]), paraC))).toMatch(/^subscription_mismatch/);
  });

  it("When the signature is not the hub's, then the refusal is invalid_signature, never a word about subscriptions", async () => {
    const forjada = entrega('sub-a');
    const headers = signed(forjada, [generateKey()]);
    headers['webhook-key-id'] = a.kid;
    const verifier = createVerifier({ jwksUrl, expectedSubscription: 'sub-b' });
    expect(await rejection(verifier.verify(headers, forjada))).toMatch(/^invalid_signature/);
  });
});

import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { generateKeyPairSync, type KeyObject, randomUUID, sign as ed25519 } from 'node:crypto';
import { createVerifier, type VerificationErrorCode, WebhookVerificationError } from './index';

// Signed with node:crypto as the hub signs (a dependency on @hub/signing would be a workspace cycle).
interface Key {
  kid: string;
  privateKey: KeyObject;
  jwk: { kty: string; crv: string; x: string; kid: string; use: string; alg: string };
}
interface KeySet {
  keys: Key[];
}
function generateKey(): Key {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const kid = randomUUID();
  return {
    kid,
    privateKey,
    jwk: {
      ...(publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string }),
      kid,
      use: 'sig',
      alg: 'EdDSA',
    },
  };
}
const publicJwks = (set: KeySet) => ({ keys: set.keys.map((k) => k.jwk) });
function addKey(set: KeySet): { set: KeySet; key: Key } {
  const key = generateKey();
  return { set: { keys: [key, ...set.keys] }, key };
}
function signWebhook(message: { id: string; body: string; timestamp?: number }, set: KeySet): Record<string, string> {
  const timestamp = message.timestamp ?? Math.floor(Date.now() / 1000);
  const content = Buffer.from(`${message.id}.${timestamp}.${message.body}`);
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': set.keys
      .map((k) => `v1a,${ed25519(null, content, k.privateKey).toString('base64')}`)
      .join(' '),
    'webhook-key-id': set.keys.map((k) => k.kid).join(' '),
  };
}

/** The hub's GET /.well-known/jwks.json: a real HTTP server whose keys can change; counts its hits. */
let keys: KeySet;
let hits = 0;
let server: Server;
let jwksUrl: string;
beforeEach(async () => {
  keys = { keys: [generateKey()] };
  hits = 0;
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(publicJwks(keys)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

const body = JSON.stringify({ id: 'evt-1', tipo: 'pedido.criado', dados: { total_centavos: 1990 } });
const sign = (set: KeySet, timestamp?: number, id = 'msg_1') => signWebhook({ id, body, timestamp }, set);
const codeOf = (promise: Promise<unknown>): Promise<VerificationErrorCode | 'resolved'> =>
  promise.then(
    () => 'resolved' as const,
    (error) => {
      if (error instanceof WebhookVerificationError) return error.code;
      throw error;
    },
  );

describe('createVerifier', () => {
  it('When a delivery is signed by a key of the JWKS, then verify resolves to the parsed body, with headers as an object or as Headers', async () => {
    const verifier = createVerifier({ jwksUrl, acceptAnySubscription: true });
    const headers = sign(keys);
    expect(await verifier.verify(headers, body)).toEqual(JSON.parse(body));
    const asHeaders = new Headers(headers as unknown as Record<string, string>);
    expect(await verifier.verifyDelivery(asHeaders, new TextEncoder().encode(body))).toMatchObject({
      id: 'msg_1',
      kid: keys.keys[0]!.kid,
    });
    expect(hits).toBe(1);
  });

  it('When the body is changed or the timestamp is too old, in the future or not a number, then it is refused with its code', async () => {
    // One fixed clock for signer and verifier: with two real clocks a second may tick between them.
    const now = Math.floor(Date.now() / 1000);
    const verifier = createVerifier({ jwksUrl, acceptAnySubscription: true, now: () => now * 1000 });
    expect(await codeOf(verifier.verify(sign(keys, now), body.replace('1990', '1')))).toBe('invalid_signature');
    expect(await codeOf(verifier.verify(sign(keys, now - 301), body))).toBe('timestamp_too_old');
    expect(await codeOf(verifier.verify(sign(keys, now + 301), body))).toBe('timestamp_in_future');
    expect(await codeOf(verifier.verify({ ...sign(keys), 'webhook-timestamp': 'soon' }, body))).toBe(
      'invalid_timestamp',
    );
    expect(await codeOf(verifier.verify({ 'webhook-id': 'msg_1' }, body))).toBe('missing_header');
  });

  it('When a kid is unknown, then the JWKS is fetched again once, and not again within a minute', async () => {
    let clock = Date.now();
    const verifier = createVerifier({ jwksUrl, acceptAnySubscription: true, now: () => clock });
    await verifier.verify(sign(keys), body);
    const stranger: KeySet = { keys: [generateKey()] };
    expect(await codeOf(verifier.verify(sign(stranger), body))).toBe('unknown_key');
    expect(hits).toBe(2);
    clock += 59_000;
    expect(await codeOf(verifier.verify(sign(stranger, Math.floor(clock / 1000)), body))).toBe('unknown_key');
    expect(hits).toBe(2);
    clock += 1_000;
    expect(await codeOf(verifier.verify(sign(stranger, Math.floor(clock / 1000)), body))).toBe('unknown_key');
    expect(hits).toBe(3);
  });

  it('When two keys sign during a rotation, then a verifier holding either key accepts, and a new key is fetched', async () => {
    const verifier = createVerifier({ jwksUrl, acceptAnySubscription: true });
    await verifier.verify(sign(keys), body);
    const { set, key } = addKey(keys);
    const both = sign(set);
    expect(both['webhook-signature']!.split(' ')).toHaveLength(2);
    // The cached JWKS holds only the old key: the old key's signature verifies without a refetch.
    expect((await verifier.verifyDelivery(both, body)).kid).toBe(keys.keys[0]!.kid);
    expect(hits).toBe(1);
    keys = set;
    const onlyNew = sign({ keys: [set.keys.find((k) => k.kid === key.kid)!] });
    expect((await verifier.verifyDelivery(onlyNew, body)).kid).toBe(key.kid);
    expect(hits).toBe(2);
  });

  it('When a key is removed from the JWKS, then after the refetch it no longer verifies', async () => {
    const verifier = createVerifier({ jwksUrl, acceptAnySubscription: true });
    const old = keys;
    await verifier.verify(sign(old), body);
    const replacement: KeySet = { keys: [generateKey()] };
    keys = replacement;
    // A delivery signed by the new key makes the verifier refetch; the JWKS it gets no longer has the old key.
    await verifier.verify(sign(replacement), body);
    expect(hits).toBe(2);
    expect(await codeOf(verifier.verify(sign(old), body))).toBe('unknown_key');
  });
});

describe('the package as published', () => {
  it('When its source is read, then it imports nothing but tweetnacl and its own files (it runs at the edge)', () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
    expect(Object.keys(manifest.dependencies)).toEqual(['tweetnacl']);
    for (const file of readdirSync(__dirname).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
      const source = readFileSync(path.join(__dirname, file), 'utf8');
      const imports = [...source.matchAll(/\bfrom\s*['"]([^'"]+)['"]|\b(?:import|require)\(\s*['"]([^'"]+)['"]/g)];
      for (const [, from, dynamic] of imports) {
        expect({ file, from: from ?? dynamic }).toEqual({
          file,
          from: expect.stringMatching(/^(tweetnacl|\.\/[\w-]+\.js)$/),
        });
      }
      expect({ file, buffer: /\bBuffer\b/.test(source.replace(/^\s*(\/\/|\*).*$/gm, '')) }).toEqual({
        file,
        buffer: false,
      });
    }
  });

  it('When it is built, then dist has ESM with declarations and verifies a delivery in plain node', async () => {
    const root = path.join(__dirname, '..');
    execFileSync('pnpm', ['--filter', '@hub/webhook-verifier', 'build'], { cwd: root, stdio: 'pipe' });
    expect(readFileSync(path.join(root, 'dist', 'index.d.ts'), 'utf8')).toMatch(/createVerifier/);
    const headers = sign(keys);
    const script = `
      import { createVerifier } from ${JSON.stringify(path.join(root, 'dist', 'index.js'))};
      const payload = await createVerifier({ jwksUrl: process.env.JWKS_URL, acceptAnySubscription: true }).verify(JSON.parse(process.env.HEADERS), process.env.BODY);
      process.stdout.write(JSON.stringify(payload));`;
    // Asynchronously: the JWKS server lives in this process and must answer the child.
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, JWKS_URL: jwksUrl, HEADERS: JSON.stringify(headers), BODY: body },
    });
    expect(JSON.parse(stdout)).toEqual(JSON.parse(body));
  });
});

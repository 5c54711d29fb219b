import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { importJWK, jwtVerify, SignJWT } from 'jose';
import nacl from 'tweetnacl';
import { addKey, generateKey, type KeySet, publicJwks, retireKey, signersOf } from './keys';
import { signWebhook, signWebhookText } from './sign';
import { verifyWebhook, WebhookVerificationError } from './verify';

const body = JSON.stringify({
  id: '0193a1b2-0000-7000-8000-000000000001',
  tipo: 'pedido.criado',
  dados: { valor: 10, nome: 'Zoë' },
});
const now = 1_800_000_000;

function keySet(): KeySet {
  return { keys: [generateKey()] };
}

function reason(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.code;
    throw error;
  }
  return undefined;
}

describe('signWebhook and verifyWebhook', () => {
  it('When a delivery is signed with node:crypto, then the tweetnacl verifier accepts it with the JWKS', () => {
    const set = keySet();
    const headers = signWebhook({ id: 'msg_1', timestamp: now, body }, signersOf(set));
    expect(headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]+=*$/);
    expect(headers['webhook-key-id']).toBe(set.keys[0]!.kid);
    expect(verifyWebhook(headers, body, publicJwks(set), { now, acceptAnySubscription: true })).toEqual({
      id: 'msg_1',
      timestamp: now,
      kid: set.keys[0]!.kid,
    });
  });

  it('When the signature is checked by tweetnacl by hand, then it is the Ed25519 signature of "{id}.{timestamp}.{body}"', () => {
    const set = keySet();
    const headers = signWebhook({ id: 'msg_2', timestamp: now, body }, signersOf(set));
    const signature = Uint8Array.from(Buffer.from(headers['webhook-signature'].slice(4), 'base64'));
    const publicKey = Uint8Array.from(Buffer.from(publicJwks(set).keys[0]!.x, 'base64url'));
    const message = new TextEncoder().encode(`msg_2.${now}.${body}`);
    expect(nacl.sign.detached.verify(message, signature, publicKey)).toBe(true);
  });

  it('When the body is given as bytes or the headers as a fetch Headers object, then it verifies the same', () => {
    const set = keySet();
    const headers = signWebhook({ id: 'msg_3', timestamp: now, body: Buffer.from(body) }, signersOf(set));
    const fetchHeaders = new Headers(headers as unknown as Record<string, string>);
    expect(
      verifyWebhook(fetchHeaders, new TextEncoder().encode(body), publicJwks(set), { now, acceptAnySubscription: true })
        .id,
    ).toBe('msg_3');
  });

  it("When the body is given as text to signWebhookText, then the bytes it gives are the body and the headers are signWebhook's", () => {
    const set = { keys: [generateKey(), generateKey()] };
    const { headers, body: bytes } = signWebhookText({ id: 'msg_4', timestamp: now, body }, signersOf(set));
    expect(bytes.toString('utf8')).toBe(body);
    expect(bytes.length).toBe(Buffer.byteLength(body));
    expect(headers).toEqual(signWebhook({ id: 'msg_4', timestamp: now, body }, signersOf(set)));
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook(headers, bytes, publicJwks(set), { now, acceptAnySubscription: true }).id).toBe('msg_4');
  });

  it('When the body, the id or the timestamp is changed, then the signature is refused', () => {
    const set = keySet();
    const jwks = publicJwks(set);
    const headers = signWebhook({ id: 'msg_4', timestamp: now, body }, signersOf(set));
    expect(
      reason(() => verifyWebhook(headers, body.replace('10', '11'), jwks, { now, acceptAnySubscription: true })),
    ).toBe('invalid_signature');
    expect(
      reason(() =>
        verifyWebhook({ ...headers, 'webhook-id': 'msg_5' }, body, jwks, { now, acceptAnySubscription: true }),
      ),
    ).toBe('invalid_signature');
    expect(
      reason(() =>
        verifyWebhook({ ...headers, 'webhook-timestamp': String(now + 1) }, body, jwks, {
          now,
          acceptAnySubscription: true,
        }),
      ),
    ).toBe('invalid_signature');
  });

  it('When the timestamp is older or newer than the tolerance, then it is refused before any signature check', () => {
    const set = keySet();
    const jwks = publicJwks(set);
    const old = signWebhook({ id: 'msg_6', timestamp: now - 301, body }, signersOf(set));
    const future = signWebhook({ id: 'msg_7', timestamp: now + 301, body }, signersOf(set));
    expect(reason(() => verifyWebhook(old, body, jwks, { now, acceptAnySubscription: true }))).toBe(
      'timestamp_too_old',
    );
    expect(reason(() => verifyWebhook(future, body, jwks, { now, acceptAnySubscription: true }))).toBe(
      'timestamp_in_future',
    );
    expect(verifyWebhook(old, body, jwks, { now, toleranceSeconds: 600, acceptAnySubscription: true }).id).toBe(
      'msg_6',
    );
    expect(
      reason(() =>
        verifyWebhook({ ...old, 'webhook-timestamp': '17e8' }, body, jwks, { now, acceptAnySubscription: true }),
      ),
    ).toBe('invalid_timestamp');
  });

  it('When @hub/signing/verify is given a tolerance or a now of NaN or Infinity, then it throws (the same checks as @hub/webhook-verifier), and it honours expectedSubscription', () => {
    const set = keySet();
    const jwks = publicJwks(set);
    const old = signWebhook({ id: 'msg_6b', timestamp: now - 3600, body }, signersOf(set));
    for (const toleranceSeconds of [Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => verifyWebhook(old, body, jwks, { now, toleranceSeconds, acceptAnySubscription: true })).toThrow(
        TypeError,
      );
    expect(() => verifyWebhook(old, body, jwks, { now: Number.NaN, acceptAnySubscription: true })).toThrow(TypeError);
    const paraA = JSON.stringify({ id: 'evt', assinatura_id: 'sub-a', dados: {} });
    const headers = signWebhook({ id: 'msg_6c', timestamp: now, body: paraA }, signersOf(set));
    expect(verifyWebhook(headers, paraA, jwks, { now, expectedSubscription: 'sub-a' }).id).toBe('msg_6c');
    expect(reason(() => verifyWebhook(headers, paraA, jwks, { now, expectedSubscription: 'sub-b' }))).toBe(
      'subscription_mismatch',
    );
    // Neither the subscription nor the opt-out: a TypeError, not a delivery that verifies for anyone.
    expect(() => verifyWebhook(headers, paraA, jwks, { now })).toThrow(/expectedSubscription is required/);
  });

  it('When headers are missing or carry only symmetric v1 signatures, then it is refused', () => {
    const set = keySet();
    const jwks = publicJwks(set);
    const headers = signWebhook({ id: 'msg_8', timestamp: now, body }, signersOf(set));
    expect(
      reason(() => verifyWebhook({ 'webhook-id': 'msg_8' }, body, jwks, { now, acceptAnySubscription: true })),
    ).toBe('missing_header');
    expect(
      reason(() =>
        verifyWebhook({ ...headers, 'webhook-signature': 'v1,c2lnbmF0dXJl' }, body, jwks, {
          now,
          acceptAnySubscription: true,
        }),
      ),
    ).toBe('no_signature');
  });

  it('When the delivery is signed by a key that is not in the JWKS, then it is refused and the caller is told to refetch', () => {
    const signedBy = keySet();
    const other = keySet();
    const headers = signWebhook({ id: 'msg_9', timestamp: now, body }, signersOf(signedBy));
    expect(reason(() => verifyWebhook(headers, body, publicJwks(other), { now, acceptAnySubscription: true }))).toBe(
      'unknown_key',
    );
    const { 'webhook-key-id': _hint, ...withoutHint } = headers;
    expect(
      reason(() => verifyWebhook(withoutHint, body, publicJwks(other), { now, acceptAnySubscription: true })),
    ).toBe('invalid_signature');
  });

  it('When a signature claims a known kid but was made by another key, then it is refused', () => {
    const trusted = keySet();
    const attacker = keySet();
    const headers = signWebhook({ id: 'msg_10', timestamp: now, body }, signersOf(attacker));
    const forged = { ...headers, 'webhook-key-id': trusted.keys[0]!.kid };
    expect(reason(() => verifyWebhook(forged, body, publicJwks(trusted), { now, acceptAnySubscription: true }))).toBe(
      'invalid_signature',
    );
  });

  it('When a key is being rotated, then both keys sign and a subscriber holding either JWKS verifies', () => {
    const before = keySet();
    const { set: during, key: added } = addKey(before);
    const headers = signWebhook({ id: 'msg_11', timestamp: now, body }, signersOf(during));
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['webhook-key-id'].split(' ')).toEqual([added.kid, before.keys[0]!.kid]);
    // A subscriber that fetched the JWKS before the rotation still holds only the old key.
    expect(verifyWebhook(headers, body, publicJwks(before), { now, acceptAnySubscription: true }).kid).toBe(
      before.keys[0]!.kid,
    );
    expect(
      verifyWebhook(
        headers,
        body,
        { keys: [publicJwks(during).keys.find((k) => k.kid === added.kid)!] },
        { now, acceptAnySubscription: true },
      ).kid,
    ).toBe(added.kid);

    const after = retireKey(during, before.keys[0]!.kid);
    const later = signWebhook({ id: 'msg_12', timestamp: now, body }, signersOf(after));
    expect(later['webhook-key-id']).toBe(added.kid);
    expect(publicJwks(after).keys.map((k) => k.kid)).toEqual([before.keys[0]!.kid, added.kid]);
    expect(verifyWebhook(later, body, publicJwks(after), { now, acceptAnySubscription: true }).kid).toBe(added.kid);
  });

  it('When a signature is corrupted among two, then the other one still verifies', () => {
    const { set } = addKey(keySet());
    const headers = signWebhook({ id: 'msg_13', timestamp: now, body }, signersOf(set));
    const [first, second] = headers['webhook-signature'].split(' ');
    const broken = `v1a,${Buffer.alloc(64).toString('base64')} ${second}`;
    expect(first).not.toBe(broken.split(' ')[0]);
    expect(
      verifyWebhook({ ...headers, 'webhook-signature': broken }, body, publicJwks(set), {
        now,
        acceptAnySubscription: true,
      }).kid,
    ).toBe(set.keys[0]!.kid);
  });

  it('When the public JWK is imported by jose, then it is a valid Ed25519 key that verifies the same key pair', async () => {
    const set = keySet();
    const [jwk] = publicJwks(set).keys;
    const signer = signersOf(set)[0]!;
    const jwt = await new SignJWT({ ok: true }).setProtectedHeader({ alg: 'EdDSA' }).sign(signer.privateKey);
    const { payload } = await jwtVerify(jwt, await importJWK(jwk!, 'EdDSA'));
    expect(payload.ok).toBe(true);
    expect(createPublicKey(signer.privateKey).export({ format: 'jwk' }).x).toBe(jwk!.x);
  });

  it('When the id holds a dot or no key is active, then signing refuses', () => {
    expect(() => signWebhook({ id: 'a.b', body }, signersOf(keySet()))).toThrow(/dots/);
    expect(() => signWebhook({ id: 'a', body }, [])).toThrow(/no signing key/);
  });

  it('When the verifier is bundled for another runtime, then its modules use no Node built-in and no Buffer', () => {
    for (const file of ['verify.ts', 'headers.ts']) {
      const source = readFileSync(path.join(__dirname, file), 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '');
      expect({ file, node: /from ['"]node:|require\(/.test(source), buffer: /\bBuffer\b/.test(source) }).toEqual({
        file,
        node: false,
        buffer: false,
      });
    }
  });
});

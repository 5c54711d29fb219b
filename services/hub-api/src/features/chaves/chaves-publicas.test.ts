import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConfigError } from '@hub/config';
import { generateKey, publicJwks, type KeySet } from '@hub/signing';
import request from 'supertest';
import { encerrarContexto, type Contexto, iniciarContexto } from '../../contexto.test-support';
import { chavesPublicas } from './chaves-publicas';

// Issue 18: hub-api serves only the public JWKS, so a deployment gives it the public keys alone.
const set: KeySet = { keys: [generateKey(), { ...generateKey(), state: 'retired' }] };
const publicas = publicJwks(set);

describe('hub-api with HUB_SIGNING_JWKS (the public keys only)', () => {
  let ctx: Contexto;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'hub-api-sem-chave-'));
    ctx = await iniciarContexto({
      ambiente: 'PRODUCTION',
      env: { HUB_SIGNING_JWKS: JSON.stringify(publicas), HUB_SIGNING_KEYS_FILE: path.join(dir, 'nunca.json') },
    });
  });
  afterAll(async () => {
    await encerrarContexto(ctx);
    await rm(dir, { recursive: true, force: true });
  });

  it('When hub-api starts in PRODUCTION with HUB_SIGNING_JWKS and no private key anywhere, then it serves exactly those public keys and reads or writes no key file', async () => {
    const response = await request(ctx.hub.url).get('/.well-known/jwks.json').expect(200);
    expect(response.body).toEqual(publicas);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('chavesPublicas (what HUB_SIGNING_JWKS may hold)', () => {
  const refused = (json: string) => {
    try {
      chavesPublicas(json);
    } catch (error) {
      return (error as ConfigError).message;
    }
    throw new Error('accepted');
  };

  it('When it holds a private key, then the start is refused saying to give the public keys only', () => {
    const [chave] = set.keys;
    const comPrivada = { keys: [{ ...publicas.keys[0], d: chave!.private_jwk.d }] };
    expect(refused(JSON.stringify(comPrivada))).toMatch(/HUB_SIGNING_JWKS keys\.0 holds a private key/);
    // The private key set itself, pasted by mistake.
    expect(refused(JSON.stringify(set))).toMatch(/HUB_SIGNING_JWKS keys\.0 holds a private key/);
  });

  it('When a kid is not the thumbprint of its key, or the text is not a JWKS of Ed25519 keys, then the start is refused naming the variable', () => {
    const trocado = { keys: [{ ...publicas.keys[0], kid: publicas.keys[1]!.kid }] };
    expect(refused(JSON.stringify(trocado))).toMatch(/keys\.0\.kid is not the thumbprint/);
    expect(refused('CHANGE-ME')).toMatch(/HUB_SIGNING_JWKS is not valid JSON/);
    expect(refused('{"keys":[]}')).toMatch(/HUB_SIGNING_JWKS keys/);
    expect(refused(JSON.stringify({ keys: [{ ...publicas.keys[0], crv: 'P-256' }] }))).toMatch(/keys\.0\.crv/);
  });

  it('When it holds public Ed25519 keys, then they are served with use sig and alg EdDSA, nothing else', async () => {
    const extra = { keys: publicas.keys.map((k) => ({ ...k, key_ops: ['verify'] })) };
    await expect(chavesPublicas(JSON.stringify(extra)).jwks()).resolves.toEqual(publicas);
  });
});

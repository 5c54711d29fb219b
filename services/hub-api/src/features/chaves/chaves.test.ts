import { stat } from 'node:fs/promises';
import {
  addKey,
  generateKey,
  type Jwks,
  type KeyStore,
  readKeyFile,
  removeKey,
  retireKey,
  signWebhook,
  writeKeyFile,
} from '@hub/signing';
import { verifyWebhook } from '@hub/signing/verify';
import { encerrarContexto, type Contexto, iniciarContexto } from '../../contexto.test-support';
import { startHubApiForTests } from '../../hub-api.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

// This hub reads its key file (not HUB_SIGNING_JWKS): its keys are a KeyStore, signers included.
const signers = () => (ctx.hub.keys as KeyStore).signers();

const jwks = async () => {
  const response = await ctx.api().get('/.well-known/jwks.json');
  expect(response.status).toBe(200);
  return response.body as Jwks & { keys: { kid: string }[] };
};

describe('GET /.well-known/jwks.json', () => {
  test('When anyone asks without a token, then the public keys come with a 5-minute public cache', async () => {
    const response = await ctx.api().get('/.well-known/jwks.json');
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    expect(response.body.keys).toHaveLength(1);
    expect(response.body.keys[0]).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      kid: expect.any(String),
      use: 'sig',
      alg: 'EdDSA',
    });
  });

  test('When the keys are served, then no private member appears anywhere in the answer', async () => {
    const response = await ctx.api().get('/.well-known/jwks.json');
    const file = (await readKeyFile(ctx.hub.keysFile))!;
    for (const key of file.keys) expect(response.text).not.toContain(key.private_jwk.d);
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'private_jwk'])
      expect(response.text).not.toContain(`"${member}"`);
  });

  test('When no key was configured, then the first start created a key file readable by its owner only', async () => {
    expect((await stat(ctx.hub.keysFile)).mode & 0o777).toBe(0o600);
  });

  test('When the signer signs a delivery, then tweetnacl verifies it against the served JWKS', async () => {
    const body = JSON.stringify({ id: 'evento-1', tipo: 'pedido.criado', dados: { valor: 1 } });
    const headers = signWebhook({ id: 'entrega-1', body }, await signers());
    expect(verifyWebhook(headers, body, await jwks(), { acceptAnySubscription: true }).kid).toBe(
      (await jwks()).keys[0]!.kid,
    );
    expect(() => verifyWebhook(headers, `${body} `, { keys: [] }, { acceptAnySubscription: true })).toThrow();
  });

  test('When a key is added, retired and removed with the key file, then the JWKS follows without a restart', async () => {
    const before = (await readKeyFile(ctx.hub.keysFile))!;
    const old = before.keys[0]!.kid;
    const { set: during, key } = addKey(before);
    await writeKeyFile(ctx.hub.keysFile, during);
    expect((await jwks()).keys.map((k) => k.kid).sort()).toEqual([old, key.kid].sort());

    const body = '{"rotacao":true}';
    const signed = signWebhook({ id: 'entrega-2', body }, await signers());
    expect(signed['webhook-signature'].split(' ')).toHaveLength(2);
    expect(
      verifyWebhook(
        signed,
        body,
        { keys: (await jwks()).keys.filter((k) => k.kid === old) },
        { acceptAnySubscription: true },
      ).kid,
    ).toBe(old);

    await writeKeyFile(ctx.hub.keysFile, retireKey(during, old));
    expect((await jwks()).keys).toHaveLength(2);
    expect((await signers()).map((s) => s.kid)).toEqual([key.kid]);

    await writeKeyFile(ctx.hub.keysFile, removeKey(retireKey(during, old), old));
    expect((await jwks()).keys.map((k) => k.kid)).toEqual([key.kid]);
  });

  test('When the keys come from HUB_SIGNING_KEYS, then they are served and no key file is written', async () => {
    const key = generateKey();
    const hub = await startHubApiForTests(ctx.identity, ctx.access, {
      env: { HUB_SIGNING_KEYS: JSON.stringify({ keys: [key] }) },
    });
    try {
      const response = await fetch(`${hub.url}/.well-known/jwks.json`);
      expect(((await response.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid)).toEqual([key.kid]);
      await expect(stat(hub.keysFile)).rejects.toThrow(/ENOENT/);
    } finally {
      await hub.close();
    }
  });
});

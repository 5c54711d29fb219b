import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AcessoAtual } from '@hub/contracts';
import { AppError, forbidden } from '@hub/http';
import { hasPermission } from './guard';
import { type AccessResolver, CachedAccessResolver } from './resolver';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { bearerToken, createTokenVerifier, type UserClaims } from './tokens';

const acesso = (overrides: Partial<AcessoAtual> = {}): AcessoAtual => ({
  id: 'a',
  email: 'ana@empresa.com.br',
  nome: 'Ana',
  perfil: 'colaborador',
  master: false,
  perfil_acesso: 'P',
  permissoes: { monitoramento: { ler: true, criar: false } },
  ...overrides,
});
const claims = (overrides: Partial<UserClaims> = {}): UserClaims => ({
  sub: 's',
  email: 'Ana@empresa.com.br',
  name: '',
  master: false,
  typ: 'usuario',
  ...overrides,
});

/** A source that answers from a queue of outcomes and counts the questions (a unit test of the cache rule). */
function source(...outcomes: (AcessoAtual | Error)[]) {
  const calls: string[] = [];
  const resolver: AccessResolver = {
    resolve: async (c) => {
      calls.push(c.email);
      const next = outcomes.shift();
      if (!next) throw new Error('no more outcomes');
      if (next instanceof Error) throw next;
      return next;
    },
  };
  return { resolver, calls };
}

describe('hasPermission', () => {
  it('When the action is granted, then yes; an absent or false action, then no', () => {
    expect(hasPermission(acesso(), 'monitoramento', 'ler')).toBe(true);
    expect(hasPermission(acesso(), 'monitoramento', 'criar')).toBe(false);
    expect(hasPermission(acesso(), 'monitoramento', 'deletar')).toBe(false);
    expect(hasPermission(acesso(), 'colaboradores', 'ler')).toBe(false);
  });

  it('When any action is asked, then one true action of the area is enough, and none is not', () => {
    expect(hasPermission(acesso(), 'monitoramento', 'qualquer')).toBe(true);
    expect(hasPermission(acesso({ permissoes: { colaboradores: { ler: false } } }), 'colaboradores', 'qualquer')).toBe(
      false,
    );
  });

  it('When the caller is a master, then every action of every area', () => {
    expect(hasPermission(acesso({ master: true, permissoes: {} }), 'configuracoes', 'deletar')).toBe(true);
  });
});

describe('CachedAccessResolver', () => {
  it('When asked twice within the TTL, then the source is asked once, whatever the case of the e-mail', async () => {
    const { resolver, calls } = source(acesso());
    const cache = new CachedAccessResolver(resolver, 60_000);
    await cache.resolve(claims(), 't');
    await cache.resolve(claims({ email: 'ana@EMPRESA.com.br' }), 't');
    expect(calls).toHaveLength(1);
  });

  it('When the entry is forgotten, then the source is asked again', async () => {
    const { resolver, calls } = source(acesso(), acesso({ perfil_acesso: null }));
    const cache = new CachedAccessResolver(resolver, 60_000);
    await cache.resolve(claims(), 't');
    cache.forget('ANA@empresa.com.br');
    expect((await cache.resolve(claims(), 't')).perfil_acesso).toBeNull();
    expect(calls).toHaveLength(2);
  });

  it('When the source refused (403), then the refusal is kept too', async () => {
    const { resolver, calls } = source(forbidden('inactive', 'acesso_inativo'));
    const cache = new CachedAccessResolver(resolver, 60_000);
    await expect(cache.resolve(claims(), 't')).rejects.toMatchObject({ status: 403 });
    await expect(cache.resolve(claims(), 't')).rejects.toMatchObject({ codigo: 'acesso_inativo' });
    expect(calls).toHaveLength(1);
  });

  it('When the source could not be reached (503 or a crash), then nothing is kept', async () => {
    const { resolver, calls } = source(new AppError(503, 'acesso_indisponivel', 'down'), new Error('boom'), acesso());
    const cache = new CachedAccessResolver(resolver, 60_000);
    await expect(cache.resolve(claims(), 't')).rejects.toMatchObject({ status: 503 });
    await expect(cache.resolve(claims(), 't')).rejects.toThrow('boom');
    await expect(cache.resolve(claims(), 't')).resolves.toMatchObject({ id: 'a' });
    expect(calls).toHaveLength(3);
  });

  it('When the source cannot answer after the ttl, then the last answer stands in until staleMs past it, and no longer', async () => {
    jest.useFakeTimers({ now: 0 });
    try {
      const down = new AppError(503, 'acesso_indisponivel', 'down');
      const { resolver, calls } = source(acesso(), down, down, down);
      const cache = new CachedAccessResolver(resolver, 1_000, 10_000);
      await cache.resolve(claims(), 't');
      jest.setSystemTime(1_500);
      await expect(cache.resolve(claims(), 't')).resolves.toMatchObject({ id: 'a' });
      jest.setSystemTime(10_900);
      await expect(cache.resolve(claims(), 't')).resolves.toMatchObject({ id: 'a' });
      jest.setSystemTime(11_100);
      await expect(cache.resolve(claims(), 't')).rejects.toMatchObject({ status: 503 });
      expect(calls).toHaveLength(4);
    } finally {
      jest.useRealTimers();
    }
  });

  it('When an answer was forgotten or the source refused, then nothing stands in for it while the source is down', async () => {
    const down = new AppError(503, 'acesso_indisponivel', 'down');
    const { resolver } = source(acesso(), down, forbidden('inactive', 'acesso_inativo'), down);
    const cache = new CachedAccessResolver(resolver, 0, 60_000);
    await cache.resolve(claims(), 't');
    cache.forget('ana@empresa.com.br');
    await expect(cache.resolve(claims(), 't')).rejects.toMatchObject({ status: 503 });
    await expect(cache.resolve(claims(), 't')).rejects.toMatchObject({ status: 403 });
    // The refusal stands in as a refusal, never as the earlier answer.
    await expect(cache.resolve(claims(), 't')).rejects.toMatchObject({ status: 403 });
  });

  it('When a change is announced while the source is being asked and the source then cannot answer, then the earlier answer does not stand in', async () => {
    let falhar: (error: Error) => void = () => undefined;
    const calls: string[] = [];
    const resolver: AccessResolver = {
      resolve: async (c) => {
        calls.push(c.email);
        if (calls.length === 1) return acesso();
        return new Promise<AcessoAtual>((_resolve, reject) => {
          falhar = reject;
        });
      },
    };
    const cache = new CachedAccessResolver(resolver, 0, 60_000);
    await cache.resolve(claims(), 't');
    const pedido = cache.resolve(claims(), 't');
    cache.forget('ana@empresa.com.br');
    falhar(new AppError(503, 'acesso_indisponivel', 'down'));
    await expect(pedido).rejects.toMatchObject({ status: 503 });
  });

  it('When the token says master where the cached answer did not, then the source is asked again', async () => {
    const { resolver, calls } = source(acesso(), acesso({ master: true }));
    const cache = new CachedAccessResolver(resolver, 60_000);
    await cache.resolve(claims(), 't');
    expect((await cache.resolve(claims({ master: true }), 't')).master).toBe(true);
    expect(calls).toHaveLength(2);
  });

  it('When everything is forgotten (a profile changed), then every caller is asked again', async () => {
    const { resolver, calls } = source(acesso(), acesso());
    const cache = new CachedAccessResolver(resolver, 60_000);
    await cache.resolve(claims(), 't');
    cache.forget();
    await cache.resolve(claims(), 't');
    expect(calls).toHaveLength(2);
  });
});

describe('bearerToken', () => {
  it('When the header is "Bearer <token>", then the token; anything else is 401', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer abc')).toBe('abc');
    for (const header of [undefined, '', 'Basic abc', 'Bearer', 'Bearer a b', 'Token abc']) {
      expect(() => bearerToken(header)).toThrow(expect.objectContaining({ status: 401 }));
    }
  });
});

describe('createTokenVerifier when the identity keys cannot be read', () => {
  it('When the JWKS is refused or answers 503, then 503 identidade_indisponivel, not 401', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(503).end('down');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const token = await new SignJWT({ typ: 'usuario', email: 'a@empresa.com.br' })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'k' })
      .setSubject('s')
      .setIssuer('iss')
      .setAudience('aud')
      .setExpirationTime('5m')
      .sign(privateKey);
    try {
      for (const jwksUrl of [`http://127.0.0.1:${port}/jwks.json`, 'http://127.0.0.1:1/jwks.json']) {
        const verifier = createTokenVerifier({ jwksUrl, issuer: 'iss', audience: 'aud', algorithms: ['EdDSA'] });
        await expect(verifier.user(token)).rejects.toMatchObject({ status: 503, codigo: 'identidade_indisponivel' });
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('createTokenVerifier remembering verified tokens', () => {
  let server: ReturnType<typeof createServer>;
  let jwksUrl: string;
  let sign: (claims: Record<string, unknown>, expiresAt: number) => Promise<string>;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'EdDSA', use: 'sig' };
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
    sign = (claims, expiresAt) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'EdDSA', kid: 'k1' })
        .setSubject('s')
        .setIssuer('iss')
        .setAudience('aud')
        .setIssuedAt(Math.floor(expiresAt / 1000) - 300)
        .setExpirationTime(Math.floor(expiresAt / 1000))
        .sign(privateKey);
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const verifierAt = (clock: { t: number }, extra: { verifiedCacheMs?: number; verifiedCacheSize?: number } = {}) =>
    createTokenVerifier({
      jwksUrl,
      issuer: 'iss',
      audience: 'aud',
      algorithms: ['EdDSA'],
      now: () => clock.t,
      ...extra,
    });

  it('When a remembered token reaches its expiry (plus the 30 s tolerance), then it is refused as expired', async () => {
    const clock = { t: Date.UTC(2026, 10, 23, 12) };
    const verifier = verifierAt(clock, { verifiedCacheMs: 10 * 60_000 });
    const token = await sign({ typ: 'usuario', email: 'a@empresa.com.br' }, clock.t + 60_000);
    await expect(verifier.user(token)).resolves.toMatchObject({ email: 'a@empresa.com.br' });
    clock.t += 60_000 + 29_000;
    await expect(verifier.user(token)).resolves.toMatchObject({ email: 'a@empresa.com.br' });
    clock.t += 2_000;
    await expect(verifier.user(token)).rejects.toMatchObject({ status: 401, codigo: 'token_expirado' });
  });

  it('When a user token’s e-mail is not ASCII (a KELVIN SIGN that lower-cases to k), then 401 token_invalido, not another’s access', async () => {
    const clock = { t: Date.UTC(2026, 10, 23, 12) };
    const verifier = verifierAt(clock);
    for (const email of ['\u212Aaren@empresa.com.br', 'ana@empresa.com.br\u0000', 'jos\u00e9@empresa.com.br']) {
      const token = await sign({ typ: 'usuario', email }, clock.t + 60_000);
      await expect(verifier.user(token)).rejects.toMatchObject({ status: 401, codigo: 'token_invalido' });
    }
    expect('\u212Aaren'.toLowerCase()).toBe('karen');
    // Spaces around it, Unicode ones included: the access service trims before it looks the e-mail
    // up, so these resolved to karen@'s access (String#trim removes U+00A0, U+FEFF, U+2028, U+3000).
    for (const email of [
      'karen@empresa.com.br\u00a0',
      '\ufeffkaren@empresa.com.br',
      'karen@empresa.com.br\u3000',
      'karen@empresa.com.br\u2028',
      ' karen@empresa.com.br',
      'karen@empresa.com.br\n',
    ]) {
      const token = await sign({ typ: 'usuario', email }, clock.t + 60_000);
      await expect(verifier.user(token)).rejects.toMatchObject({ status: 401, codigo: 'token_invalido' });
    }
    const token = await sign({ typ: 'usuario', email: 'Karen@empresa.com.br' }, clock.t + 60_000);
    await expect(verifier.user(token)).resolves.toMatchObject({ email: 'Karen@empresa.com.br' });
  });

  it('When a token is remembered, then a token that differs from it by one character is still verified and refused', async () => {
    const clock = { t: Date.now() };
    const verifier = verifierAt(clock);
    const token = await sign({ typ: 'aplicativo' }, clock.t + 300_000);
    await expect(verifier.application(token)).resolves.toMatchObject({ sub: 's' });
    const [h, p, sig] = token.split('.');
    const other = `${h}.${p}.${sig!.slice(0, -2)}${sig!.endsWith('AA') ? 'BB' : 'AA'}`;
    await expect(verifier.application(other)).rejects.toMatchObject({ status: 401 });
    // The type check is made on every use, remembered or not.
    await expect(verifier.user(token)).rejects.toMatchObject({ status: 401, codigo: 'tipo_de_token_invalido' });
  });

  it('When more tokens are verified than the cache holds, or the cache is off, then each is still accepted', async () => {
    const clock = { t: Date.now() };
    for (const extra of [{ verifiedCacheSize: 2 }, { verifiedCacheMs: 0 }]) {
      const verifier = verifierAt(clock, extra);
      const tokens = await Promise.all(
        [1, 2, 3].map((i) => sign({ typ: 'usuario', email: `u${i}@empresa.com.br` }, clock.t + 300_000)),
      );
      for (const _round of [1, 2])
        for (const [i, token] of tokens.entries())
          await expect(verifier.user(token)).resolves.toMatchObject({ email: `u${i + 1}@empresa.com.br` });
    }
  });
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AcessoAtual } from '@hub/contracts';
import { AppError, forbidden } from '@hub/http';
import { hasPermission } from './guard';
import { type AccessResolver, CachedAccessResolver } from './resolver';
import { generateKeyPair, SignJWT } from 'jose';
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

import { createLogger } from '@hub/log';
import { createLocalJWKSet, jwtVerify } from 'jose';
import request from 'supertest';
import { createIdentityDevApp } from './app';
import { generateSigningKey } from './keys';

describe('identity stand-in', () => {
  it('When a user or application token is issued, then it verifies against the served JWKS with the documented claims', async () => {
    const { key } = await generateSigningKey();
    const app = createIdentityDevApp({
      issuer: { issuer: 'http://id.test', audience: 'event-hub', ttlSeconds: 60, key },
      logger: createLogger('identity-dev'),
    });
    const jwks = (await request(app).get('/.well-known/jwks.json').expect(200)).body;
    expect(jwks.keys).toEqual([
      expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', kid: key.kid, alg: 'EdDSA', use: 'sig' }),
    ]);
    expect(jwks.keys[0]).not.toHaveProperty('d');
    const user = (
      await request(app).post('/token').send({ email: 'Ana@empresa.com.br', nome: 'Ana', master: true }).expect(200)
    ).body;
    expect(user).toMatchObject({ token_type: 'Bearer', expires_in: 60 });
    const verified = await jwtVerify(user.access_token, createLocalJWKSet(jwks), {
      issuer: 'http://id.test',
      audience: 'event-hub',
    });
    expect(verified.payload).toMatchObject({ email: 'ana@empresa.com.br', name: 'Ana', master: true, typ: 'usuario' });
    const application = (await request(app).post('/token/aplicativo').send({ client_id: 'loja' }).expect(200)).body;
    const appClaims = await jwtVerify(application.access_token, createLocalJWKSet(jwks), {
      issuer: 'http://id.test',
      audience: 'event-hub',
    });
    expect(appClaims.payload).toMatchObject({ sub: 'loja', typ: 'aplicativo' });
  });
});

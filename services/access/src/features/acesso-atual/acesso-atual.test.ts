import { generateSigningKey, startTestIdentity, type TestIdentity, unsignedToken } from '@hub/testing';
import request from 'supertest';
import { startAccessForTests, type TestAccess } from '../../access.test-support';

let identity: TestIdentity;
let access: TestAccess;

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
});
afterAll(async () => {
  await access?.close();
  await identity?.close();
});

const acesso = (token?: string) => {
  const call = request(access.url).get('/auth/acesso');
  return token ? call.set('authorization', `Bearer ${token}`) : call;
};

describe('GET /auth/acesso', () => {
  it('When a master calls for the first time, then the registration is created and every permission is granted', async () => {
    const token = await identity.userToken({ email: 'Chefe@empresa.com.br', nome: 'Chefe', master: true });
    const response = await acesso(token).expect(200);
    expect(response.body).toMatchObject({
      email: 'chefe@empresa.com.br',
      nome: 'Chefe',
      master: true,
      perfil: 'master',
      perfil_acesso: null,
    });
    for (const area of ['aplicativos', 'colaboradores', 'configuracoes', 'monitoramento']) {
      expect(response.body.permissoes[area]).toEqual({ ler: true, criar: true, editar: true, deletar: true });
    }
    const again = await acesso(token).expect(200);
    expect(again.body.id).toBe(response.body.id);
  });

  it('When two first requests of a master arrive together, then one registration exists', async () => {
    const token = await identity.userToken({ email: 'gemeo@empresa.com.br', master: true });
    const [a, b] = await Promise.all([acesso(token), acesso(token)]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.id).toBe(b.body.id);
  });

  it('When a collaborator with a profile calls, then its profile name and permissions come back, absent actions false', async () => {
    const token = await access.userWith('leitor@empresa.com.br', { colaboradores: { ler: true } });
    const response = await acesso(token).expect(200);
    expect(response.body.master).toBe(false);
    expect(response.body.perfil).toBe('colaborador');
    expect(response.body.nome).toBe('leitor@empresa.com.br');
    expect(response.body.perfil_acesso).toMatch(/^perfil /);
    expect(response.body.permissoes.colaboradores).toEqual({ ler: true, criar: false, editar: false, deletar: false });
    expect(response.body.permissoes.monitoramento).toEqual({ ler: false, criar: false, editar: false, deletar: false });
  });

  it('When a non-master without registration calls, then 403 acesso_nao_cadastrado', async () => {
    const token = await identity.userToken({ email: 'estranho@empresa.com.br' });
    const response = await acesso(token).expect(403);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(response.body).toMatchObject({ status: 403, codigo: 'acesso_nao_cadastrado', title: 'Forbidden' });
    expect(response.body.type).toContain('acesso_nao_cadastrado');
  });

  it('When the access is inactive, then 403 acesso_inativo', async () => {
    const token = await access.userWith('inativo@empresa.com.br', {});
    await acesso(token).expect(200);
    await access.deactivate('inativo@empresa.com.br');
    expect((await acesso(token).expect(403)).body.codigo).toBe('acesso_inativo');
  });
});

describe('The refusal matrix of tokens (401)', () => {
  const master = { email: 'master@empresa.com.br', name: 'M', master: true, typ: 'usuario' };

  it('When no token is sent, then 401 with WWW-Authenticate', async () => {
    const response = await acesso().expect(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expect(response.body.codigo).toBe('nao_autenticado');
  });

  it('When the scheme is not Bearer, then 401', async () => {
    await request(access.url).get('/auth/acesso').set('authorization', 'Basic abc').expect(401);
  });

  it('When the token expired, then 401 token_expirado', async () => {
    const token = await identity.craft({ claims: master, expiresIn: Math.floor(Date.now() / 1000) - 120 });
    expect((await acesso(token).expect(401)).body.codigo).toBe('token_expirado');
  });

  it('When the issuer is wrong, then 401', async () => {
    const token = await identity.craft({ claims: master, issuer: 'https://intruso.example' });
    expect((await acesso(token).expect(401)).body.codigo).toBe('token_invalido');
  });

  it('When the audience is wrong, then 401', async () => {
    const token = await identity.craft({ claims: master, audience: 'outro-sistema' });
    expect((await acesso(token).expect(401)).body.codigo).toBe('token_invalido');
  });

  it('When the token is unsigned (alg none), then 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = unsignedToken({
      ...master,
      sub: 'x',
      iss: identity.issuer,
      aud: identity.audience,
      exp: now + 600,
      iat: now,
    });
    expect((await acesso(token).expect(401)).body.codigo).toBe('token_invalido');
  });

  it('When the token is signed by an unknown key, then 401', async () => {
    const { key } = await generateSigningKey();
    const token = await identity.craft({ claims: master, key });
    expect((await acesso(token).expect(401)).body.codigo).toBe('token_invalido');
  });

  it('When the signature is tampered with, then 401', async () => {
    const token = await identity.userToken({ email: 'master@empresa.com.br', master: true });
    const [h, p] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), email: 'outro@empresa.com.br' }),
    ).toString('base64url');
    await acesso(`${h}.${forged}.${token.split('.')[2]}`).expect(401);
  });

  it('When an application token is sent to a user route, then 401 tipo_de_token_invalido', async () => {
    const token = await identity.appToken('loja');
    expect((await acesso(token).expect(401)).body.codigo).toBe('tipo_de_token_invalido');
  });
});

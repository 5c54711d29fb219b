import { startTestIdentity, type TestIdentity } from '@hub/testing';
import request from 'supertest';
import { startAccessForTests, type TestAccess } from '../../access.test-support';

let identity: TestIdentity;
let access: TestAccess;
let master: string;
let masterId: string;

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  master = await access.masterToken();
  masterId = (await request(access.url).get('/auth/acesso').set('authorization', `Bearer ${master}`).expect(200)).body
    .id;
});
afterAll(async () => {
  await access?.close();
  await identity?.close();
});

const call = (method: 'get' | 'patch' | 'delete' | 'post', path: string, token = master) =>
  request(access.url)[method](path).set('authorization', `Bearer ${token}`);
const criar = async (email: string) =>
  (await call('post', '/auth').send({ email, perfil: 'colaborador' }).expect(201)).body.id as string;

describe('PATCH /auth/{id}', () => {
  it('When only ativo is sent, then only ativo changes; null fields change nothing', async () => {
    const id = await criar('muda@empresa.com.br');
    const response = await call('patch', `/auth/${id}`).send({ ativo: false, email: null }).expect(200);
    expect(response.body).toMatchObject({ email: 'muda@empresa.com.br', ativo: false });
    const back = await call('patch', `/auth/${id}`).send({ ativo: true }).expect(200);
    expect(back.body.ativo).toBe(true);
  });

  it('When the e-mail changes, then it is stored lower-case and trimmed, within 160 and the domain', async () => {
    const id = await criar('antigo@empresa.com.br');
    const response = await call('patch', `/auth/${id}`).send({ email: ' NOVO@empresa.com.br ' }).expect(200);
    expect(response.body.email).toBe('novo@empresa.com.br');
    expect(
      (
        await call('patch', `/auth/${id}`)
          .send({ email: `${'x'.repeat(150)}@empresa.com.br` })
          .expect(422)
      ).body.erros[0].caminho,
    ).toBe('/email');
    expect((await call('patch', `/auth/${id}`).send({ email: 'novo@outra.com' }).expect(422)).body.codigo).toBe(
      'dominio_invalido',
    );
    expect((await call('get', `/auth/${id}`).expect(200)).body.email).toBe('novo@empresa.com.br');
  });

  it('When the new e-mail belongs to another access, then 409', async () => {
    await criar('ocupado@empresa.com.br');
    const id = await criar('livre@empresa.com.br');
    expect((await call('patch', `/auth/${id}`).send({ email: 'ocupado@empresa.com.br' }).expect(409)).body.codigo).toBe(
      'email_em_uso',
    );
  });

  it('When an unknown field is sent, then 422 and nothing changes', async () => {
    const id = await criar('campo@empresa.com.br');
    const response = await call('patch', `/auth/${id}`).send({ ativo: false, master: true }).expect(422);
    expect(response.body.erros[0].mensagem).toMatch(/unknown field.*master/);
    expect((await call('get', `/auth/${id}`).expect(200)).body).toMatchObject({ ativo: true, master: false });
  });

  it('When ativo has the wrong type, then 422', async () => {
    const id = await criar('tipo@empresa.com.br');
    expect((await call('patch', `/auth/${id}`).send({ ativo: 'sim' }).expect(422)).body.erros[0].caminho).toBe(
      '/ativo',
    );
  });

  it("When the access is a master's, then PATCH is 403 and nothing changes", async () => {
    expect((await call('patch', `/auth/${masterId}`).send({ ativo: false }).expect(403)).body.codigo).toBe(
      'acesso_master_protegido',
    );
    await call('get', '/auth/acesso').expect(200);
  });

  it('When the caller lacks colaboradores.editar, then 403', async () => {
    const id = await criar('alvo@empresa.com.br');
    const token = await access.userWith('criador@empresa.com.br', { colaboradores: { ler: true, criar: true } });
    await call('patch', `/auth/${id}`, token).send({ ativo: false }).expect(403);
  });

  it('When the access is deactivated, then its owner is refused on every route, even with permissions', async () => {
    const token = await access.userWith('chefe-de-equipe@empresa.com.br', {
      colaboradores: { ler: true, criar: true },
    });
    await call('get', '/auth', token).expect(200);
    await access.deactivate('chefe-de-equipe@empresa.com.br');
    for (const path of ['/auth', '/auth/acesso', '/auth/filtro', '/perfil-de-acesso', '/colaborador']) {
      expect((await call('get', path, token).expect(403)).body.codigo).toBe('acesso_inativo');
    }
  });
});

describe('DELETE /auth/{id}', () => {
  it('When deleted, then 204 with an empty body, and the record is hidden everywhere', async () => {
    const id = await criar('some@empresa.com.br');
    const response = await call('delete', `/auth/${id}`).expect(204);
    expect(response.text).toBe('');
    await call('get', `/auth/${id}`).expect(404);
    await call('delete', `/auth/${id}`).expect(404);
    await call('patch', `/auth/${id}`).send({ ativo: true }).expect(404);
    expect((await call('get', '/auth/filtro?email=some@').expect(200)).body).toEqual([]);
  });

  it("When the access is a master's, then 403", async () => {
    expect((await call('delete', `/auth/${masterId}`).expect(403)).body.codigo).toBe('acesso_master_protegido');
  });

  it('When the caller lacks colaboradores.deletar, then 403', async () => {
    const id = await criar('protegido@empresa.com.br');
    const token = await access.userWith('editor@empresa.com.br', { colaboradores: { ler: true, editar: true } });
    await call('delete', `/auth/${id}`, token).expect(403);
  });
});

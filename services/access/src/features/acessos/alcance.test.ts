import { startTestIdentity, type TestIdentity } from '@hub/testing';
import request from 'supertest';
import { startAccessForTests, type TestAccess } from '../../access.test-support';

// Issue 18: whoever may edit or delete accesses changes only accesses within their own reach, never
// their own, and a new e-mail does not carry a profile along (one test per door).
let identity: TestIdentity;
let access: TestAccess;
let master: string;
let forte: string;

const todas = { ler: true, criar: true, editar: true, deletar: true };
const nenhuma = { ler: false, criar: false, editar: false, deletar: false };
const gente = { colaboradores: todas };

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  master = await access.masterToken();
  forte = await criarPerfil('Forte', { colaboradores: todas, configuracoes: todas, monitoramento: todas });
});
afterAll(async () => {
  await access?.close();
  await identity?.close();
});

const call = (method: 'get' | 'post' | 'patch' | 'delete', path: string, token = master) =>
  request(access.url)[method](path).set('authorization', `Bearer ${token}`);
async function criarPerfil(nome: string, permissoes: object): Promise<string> {
  return (await call('post', '/perfil-de-acesso').send({ nome, permissoes }).expect(201)).body.id;
}
/** An access made by a master, with this profile (or none). */
async function acessoCom(email: string, perfil: string | null): Promise<string> {
  const id = (await call('post', '/auth').send({ email, perfil: 'colaborador' }).expect(201)).body.id as string;
  if (perfil) await call('patch', `/colaborador/${id}`).send({ perfil_de_acesso_id: perfil }).expect(200);
  return id;
}
const recusa = (response: request.Response) => ({ status: response.status, codigo: response.body.codigo });
const eu = async (token: string) => (await call('get', '/auth/acesso', token).expect(200)).body;

describe('PATCH and DELETE /auth/{id} within the caller’s reach', () => {
  it('When a non-master changes the e-mail of an access whose profile holds more than theirs, then 403 permissoes_excedidas and the e-mail stays', async () => {
    const token = await access.userWith('muda-email@empresa.com.br', gente);
    const chefe = await acessoCom('chefe-email@empresa.com.br', forte);
    const response = await call('patch', `/auth/${chefe}`, token).send({ email: 'meu-outro@empresa.com.br' });
    expect(recusa(response)).toEqual({ status: 403, codigo: 'permissoes_excedidas' });
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    expect((await call('get', `/auth/${chefe}`).expect(200)).body.email).toBe('chefe-email@empresa.com.br');
    expect((await call('get', '/auth/filtro?email=meu-outro@').expect(200)).body).toEqual([]);
  });

  it('When a non-master deactivates or reactivates an access whose profile holds more than theirs, then 403 permissoes_excedidas and ativo stays', async () => {
    const token = await access.userWith('desliga@empresa.com.br', gente);
    const chefe = await acessoCom('chefe-ativo@empresa.com.br', forte);
    expect(recusa(await call('patch', `/auth/${chefe}`, token).send({ ativo: false }))).toEqual({
      status: 403,
      codigo: 'permissoes_excedidas',
    });
    expect((await call('get', `/auth/${chefe}`).expect(200)).body.ativo).toBe(true);
    await call('patch', `/auth/${chefe}`).send({ ativo: false }).expect(200);
    expect(recusa(await call('patch', `/auth/${chefe}`, token).send({ ativo: true }))).toEqual({
      status: 403,
      codigo: 'permissoes_excedidas',
    });
    expect((await call('get', `/auth/${chefe}`).expect(200)).body.ativo).toBe(false);
  });

  it('When a non-master deletes an access whose profile holds more than theirs, then 403 permissoes_excedidas and it remains', async () => {
    const token = await access.userWith('apaga-chefe@empresa.com.br', gente);
    const chefe = await acessoCom('chefe-apagado@empresa.com.br', forte);
    expect(recusa(await call('delete', `/auth/${chefe}`, token))).toEqual({
      status: 403,
      codigo: 'permissoes_excedidas',
    });
    await call('get', `/auth/${chefe}`).expect(200);
  });

  it('When a non-master changes their own access (e-mail or ativo), then 403 acesso_proprio and it stays', async () => {
    const token = await access.userWith('eu-mesmo@empresa.com.br', gente);
    const antes = await eu(token);
    for (const body of [{ email: 'eu-novo@empresa.com.br' }, { ativo: false }]) {
      expect(recusa(await call('patch', `/auth/${antes.id}`, token).send(body))).toEqual({
        status: 403,
        codigo: 'acesso_proprio',
      });
    }
    expect(await eu(token)).toEqual(antes);
  });

  it('When a non-master deletes their own access, then 403 acesso_proprio and it remains', async () => {
    const token = await access.userWith('me-apago@empresa.com.br', gente);
    const antes = await eu(token);
    expect(recusa(await call('delete', `/auth/${antes.id}`, token))).toEqual({
      status: 403,
      codigo: 'acesso_proprio',
    });
    await call('get', `/auth/${antes.id}`).expect(200);
  });

  it('When the e-mail of an access with a profile changes, then the new address holds no profile and no permission', async () => {
    const token = await access.userWith('move-perfil@empresa.com.br', gente);
    const leitura = await criarPerfil('Leitura de gente', { colaboradores: { ler: true } });
    const colega = await acessoCom('colega-antigo@empresa.com.br', leitura);
    const response = await call('patch', `/auth/${colega}`, token).send({ email: 'endereco-meu@empresa.com.br' });
    expect(response.status).toBe(200);
    expect(response.body.email).toBe('endereco-meu@empresa.com.br');
    expect((await call('get', `/colaborador/${colega}`).expect(200)).body.perfil_de_acesso_id).toBeNull();
    const novo = await eu(await identity.userToken({ email: 'endereco-meu@empresa.com.br' }));
    expect(novo.perfil_acesso).toBeNull();
    expect(novo.permissoes.colaboradores).toEqual(nenhuma);
    // The same for a master: a person's permissions never pass to another address.
    const outro = await acessoCom('de-master@empresa.com.br', forte);
    await call('patch', `/auth/${outro}`).send({ email: 'para-master@empresa.com.br' }).expect(200);
    expect((await call('get', `/colaborador/${outro}`).expect(200)).body.perfil_de_acesso_id).toBeNull();
  });

  it('When a non-master changes, deactivates and deletes an access within their own permissions, then it is done', async () => {
    const token = await access.userWith('dentro@empresa.com.br', gente);
    const leitura = await criarPerfil('Leitura de gente 2', { colaboradores: { ler: true } });
    const colega = await acessoCom('colega-dentro@empresa.com.br', leitura);
    const semPerfil = await acessoCom('sem-perfil@empresa.com.br', null);
    await call('patch', `/auth/${colega}`, token).send({ ativo: false }).expect(200);
    await call('patch', `/auth/${semPerfil}`, token).send({ email: 'sem-perfil-2@empresa.com.br' }).expect(200);
    await call('delete', `/auth/${colega}`, token).expect(204);
    await call('get', `/auth/${colega}`).expect(404);
  });
});

describe('An access made for a master before their first sign-in', () => {
  it('When a non-master deactivates an access made for the e-mail of a master who has not signed in yet, then the master still signs in with every permission and the access becomes theirs, out of the non-master’s reach', async () => {
    const token = await access.userWith('tranca@empresa.com.br', gente);
    const id = (
      await call('post', '/auth', token).send({ email: 'nova-chefe@empresa.com.br', perfil: 'colaborador' }).expect(201)
    ).body.id as string;
    await call('patch', `/auth/${id}`, token).send({ ativo: false }).expect(200);

    const chefe = await access.masterToken('nova-chefe@empresa.com.br');
    const resolvido = await eu(chefe);
    expect(resolvido).toMatchObject({ id, master: true });
    expect(resolvido.permissoes.colaboradores).toEqual(todas);
    expect((await call('get', `/auth/${id}`).expect(200)).body).toMatchObject({ ativo: true, master: true });
    expect(recusa(await call('patch', `/auth/${id}`, token).send({ ativo: false }))).toEqual({
      status: 403,
      codigo: 'acesso_master_protegido',
    });
  });
});

describe('Access profiles within the caller’s reach', () => {
  const config = { configuracoes: todas };

  it('When a non-master deletes an unused profile holding more than theirs, then 403 permissoes_excedidas and it remains', async () => {
    const token = await access.userWith('apaga-perfil@empresa.com.br', config);
    const alheio = await criarPerfil('Alheio', { monitoramento: { ler: true } });
    expect(recusa(await call('delete', `/perfil-de-acesso/${alheio}`, token))).toEqual({
      status: 403,
      codigo: 'permissoes_excedidas',
    });
    await call('get', `/perfil-de-acesso/${alheio}`).expect(200);
    const proprio = await criarPerfil('Dentro', { configuracoes: { ler: true } });
    await call('delete', `/perfil-de-acesso/${proprio}`, token).expect(204);
  });

  it('When a non-master creates a profile holding more than theirs, then 403 permissoes_excedidas and nothing is created', async () => {
    const token = await access.userWith('cria-perfil@empresa.com.br', config);
    const response = await call('post', '/perfil-de-acesso', token).send({
      nome: 'Mais que eu',
      permissoes: { ...config, colaboradores: { editar: true } },
    });
    expect(recusa(response)).toEqual({ status: 403, codigo: 'permissoes_excedidas' });
    expect((await call('get', '/perfil-de-acesso/filtro?busca=Mais%20que%20eu').expect(200)).body).toEqual([]);
    await call('post', '/perfil-de-acesso', token)
      .send({ nome: 'Menos que eu', permissoes: { configuracoes: { ler: true } } })
      .expect(201);
  });
});

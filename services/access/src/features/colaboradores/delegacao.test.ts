import { startTestIdentity, type TestIdentity } from '@hub/testing';
import request from 'supertest';
import { startAccessForTests, type TestAccess } from '../../access.test-support';

// PATCH /colaborador/{id} hands out permissions: nobody may raise themselves, nor anybody else
// beyond what they hold (issue 7, first bullet).
let identity: TestIdentity;
let access: TestAccess;
let master: string;
let tudo: string;

const todas = { ler: true, criar: true, editar: true, deletar: true };
const none = { ler: false, criar: false, editar: false, deletar: false };

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  master = await access.masterToken();
  tudo = await criarPerfil('Tudo', {
    aplicativos: todas,
    colaboradores: todas,
    configuracoes: todas,
    monitoramento: todas,
  });
});
afterAll(async () => {
  await access?.close();
  await identity?.close();
});

const call = (method: 'get' | 'post' | 'patch', path: string, token = master) =>
  request(access.url)[method](path).set('authorization', `Bearer ${token}`);
async function criarPerfil(nome: string, permissoes: object): Promise<string> {
  return (await call('post', '/perfil-de-acesso').send({ nome, permissoes }).expect(201)).body.id;
}
const criarAcesso = async (email: string) =>
  (await call('post', '/auth').send({ email, perfil: 'colaborador' }).expect(201)).body.id as string;
const eu = async (token: string) => (await call('get', '/auth/acesso', token).expect(200)).body;
const perfilDe = async (id: string) => (await call('get', `/colaborador/${id}`).expect(200)).body.perfil_de_acesso_id;
const delegado = { colaboradores: { ler: true, editar: true }, configuracoes: { ler: true, editar: true } };

describe('Assigning access profiles without escalation', () => {
  it('When a non-master holding only colaboradores.ler/editar gives themselves a profile with every permission, then 403 and GET /auth/acesso lists no more than before', async () => {
    const token = await access.userWith('escala@empresa.com.br', { colaboradores: { ler: true, editar: true } });
    const antes = await eu(token);
    const response = await call('patch', `/colaborador/${antes.id}`, token).send({ perfil_de_acesso_id: tudo });
    expect(response.status).toBe(403);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    const depois = await eu(token);
    expect(depois.perfil_acesso).toBe(antes.perfil_acesso);
    expect(depois.permissoes).toEqual(antes.permissoes);
    expect(depois.permissoes.monitoramento).toEqual(none);
  });

  it('When a non-master lacks configuracoes.editar, then assigning a profile to someone else is 403 sem_permissao', async () => {
    const token = await access.userWith('so-gente@empresa.com.br', { colaboradores: { ler: true, editar: true } });
    const outro = await criarAcesso('alvo-sem-config@empresa.com.br');
    const pouco = await criarPerfil('Pouco', { colaboradores: { ler: true } });
    const response = await call('patch', `/colaborador/${outro}`, token).send({ perfil_de_acesso_id: pouco });
    expect(response.status).toBe(403);
    expect(response.body.codigo).toBe('sem_permissao');
    expect(await perfilDe(outro)).toBeNull();
  });

  it('When a non-master holding colaboradores.editar and configuracoes.editar changes their own profile, then 403 perfil_proprio, even to less', async () => {
    const token = await access.userWith('proprio@empresa.com.br', delegado);
    const antes = await eu(token);
    const menos = await criarPerfil('Menos', { colaboradores: { ler: true } });
    for (const perfil_de_acesso_id of [tudo, menos, null]) {
      const response = await call('patch', `/colaborador/${antes.id}`, token).send({ perfil_de_acesso_id });
      expect({ status: response.status, codigo: response.body.codigo }).toEqual({
        status: 403,
        codigo: 'perfil_proprio',
      });
    }
    expect((await eu(token)).perfil_acesso).toBe(antes.perfil_acesso);
  });

  it('When a non-master gives someone a profile beyond their own permissions, then 403 permissoes_excedidas and nothing changes', async () => {
    const token = await access.userWith('delega-demais@empresa.com.br', delegado);
    const cumplice = await criarAcesso('cumplice@empresa.com.br');
    for (const perfil of [tudo, await criarPerfil('Monitor', { monitoramento: { ler: true } })]) {
      const response = await call('patch', `/colaborador/${cumplice}`, token).send({ perfil_de_acesso_id: perfil });
      expect({ status: response.status, codigo: response.body.codigo }).toEqual({
        status: 403,
        codigo: 'permissoes_excedidas',
      });
    }
    expect(await perfilDe(cumplice)).toBeNull();
  });

  it('When a non-master gives someone a profile within their own permissions, then 200 and it is assigned', async () => {
    const token = await access.userWith('delega-bem@empresa.com.br', delegado);
    const colega = await criarAcesso('colega@empresa.com.br');
    const leitura = await criarPerfil('Leitura de gente', {
      colaboradores: { ler: true },
      configuracoes: { ler: true },
    });
    await call('patch', `/colaborador/${colega}`, token).send({ perfil_de_acesso_id: leitura }).expect(200);
    expect(await perfilDe(colega)).toBe(leitura);
    await call('patch', `/colaborador/${colega}`, token).send({ perfil_de_acesso_id: null }).expect(200);
    expect(await perfilDe(colega)).toBeNull();
  });

  it('When a non-master replaces or removes a profile holding more than they do, then 403 permissoes_excedidas and it stays', async () => {
    const token = await access.userWith('rebaixa@empresa.com.br', delegado);
    const chefe = await criarAcesso('superior@empresa.com.br');
    await call('patch', `/colaborador/${chefe}`).send({ perfil_de_acesso_id: tudo }).expect(200);
    const pouco = await criarPerfil('Pouco mais', { colaboradores: { ler: true } });
    for (const perfil_de_acesso_id of [pouco, null]) {
      const response = await call('patch', `/colaborador/${chefe}`, token).send({ perfil_de_acesso_id });
      expect(response.body.codigo).toBe('permissoes_excedidas');
    }
    expect(await perfilDe(chefe)).toBe(tudo);
  });

  it('When a non-master widens the profile they hold through PATCH /perfil-de-acesso, then 403 permissoes_excedidas and it keeps its permissions', async () => {
    const token = await access.userWith('amplia@empresa.com.br', delegado);
    const antes = await eu(token);
    const [perfil] = (
      await call('get', `/perfil-de-acesso/filtro?busca=${encodeURIComponent(antes.perfil_acesso)}`).expect(200)
    ).body;
    const response = await call('patch', `/perfil-de-acesso/${perfil.id}`, token).send({
      permissoes: { ...delegado, monitoramento: todas },
    });
    expect({ status: response.status, codigo: response.body.codigo }).toEqual({
      status: 403,
      codigo: 'permissoes_excedidas',
    });
    expect((await eu(token)).permissoes).toEqual(antes.permissoes);
    // Within their own permissions the profile may still be edited, e.g. renamed.
    await call('patch', `/perfil-de-acesso/${perfil.id}`, token).send({ nome: 'Delegado renomeado' }).expect(200);
    // A profile holding more than the caller may not be edited at all, not even renamed.
    const response2 = await call('patch', `/perfil-de-acesso/${tudo}`, token).send({ nome: 'Tudo?' });
    expect(response2.body.codigo).toBe('permissoes_excedidas');
  });

  it('When the OpenAPI document describes PATCH /colaborador/{id}, then it names both permissions and the refusals', async () => {
    const doc = (await request(access.url).get('/openapi.json').expect(200)).body;
    const operation = doc.paths['/colaborador/{id}'].patch;
    expect(operation.description).toBe('Requires: colaboradores.editar and configuracoes.editar');
    expect(operation.responses['403'].description).toMatch(/perfil_proprio.*permissoes_excedidas/);
  });
});

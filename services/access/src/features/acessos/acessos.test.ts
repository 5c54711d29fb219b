import { startTestIdentity, type TestIdentity } from '@hub/testing';
import request from 'supertest';
import { startAccessForTests, type TestAccess } from '../../access.test-support';

let identity: TestIdentity;
let access: TestAccess;
let master: string;

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  master = await access.masterToken();
});
afterAll(async () => {
  await access?.close();
  await identity?.close();
});

const as = (token: string) => ({
  get: (path: string) => request(access.url).get(path).set('authorization', `Bearer ${token}`),
  post: (path: string, body: unknown) =>
    request(access.url)
      .post(path)
      .set('authorization', `Bearer ${token}`)
      .send(body as object),
  patch: (path: string, body: unknown) =>
    request(access.url)
      .patch(path)
      .set('authorization', `Bearer ${token}`)
      .send(body as object),
  delete: (path: string) => request(access.url).delete(path).set('authorization', `Bearer ${token}`),
});
const criar = (email: string) => as(master).post('/auth', { email, perfil: 'colaborador' });

describe('POST /auth', () => {
  it('When the e-mail has spaces and capitals, then it is stored trimmed and lower-case, active, without profile', async () => {
    const response = await criar('  Ana.Souza@Empresa.com.BR ').expect(201);
    expect(response.body).toMatchObject({
      email: 'ana.souza@empresa.com.br',
      perfil: 'colaborador',
      ativo: true,
      master: false,
      vinculado: false,
      nome: null,
      termoauth_id: null,
    });
    expect(Object.keys(response.body).sort()).toEqual(
      [
        'atualizado_em',
        'ativo',
        'bloqueado_ate',
        'criado_em',
        'email',
        'id',
        'master',
        'nome',
        'perfil',
        'termoauth_id',
        'ultimo_login_em',
        'vinculado',
      ].sort(),
    );
    expect(response.body.criado_em).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('When the e-mail has 160 characters, then it is accepted; 161, then 422', async () => {
    const domain = '@empresa.com.br';
    await criar('a'.repeat(160 - domain.length) + domain).expect(201);
    const response = await criar('b'.repeat(161 - domain.length) + domain).expect(422);
    expect(response.body.erros).toEqual([{ caminho: '/email', mensagem: 'email has at most 160 characters' }]);
  });

  it('When the e-mail is of another domain, then 422 dominio_invalido', async () => {
    expect((await criar('ana@gmail.com').expect(422)).body.codigo).toBe('dominio_invalido');
  });

  it('When the perfil is not colaborador, then 422 perfil_invalido', async () => {
    const response = await as(master).post('/auth', { email: 'perfil@empresa.com.br', perfil: 'master' }).expect(422);
    expect(response.body.codigo).toBe('perfil_invalido');
  });

  it('When the e-mail is already taken (any case), then 409 email_em_uso', async () => {
    await criar('duplo@empresa.com.br').expect(201);
    expect((await criar('DUPLO@empresa.com.br').expect(409)).body.codigo).toBe('email_em_uso');
  });

  it('When the caller lacks colaboradores.criar, then 403', async () => {
    const token = await access.userWith('so-leitura@empresa.com.br', { colaboradores: { ler: true } });
    expect(
      (await as(token).post('/auth', { email: 'x@empresa.com.br', perfil: 'colaborador' }).expect(403)).body.codigo,
    ).toBe('sem_permissao');
  });

  it('When the body is not JSON, then 400 json_invalido and nothing is created', async () => {
    const before = (await as(master).get('/auth').expect(200)).body.total;
    const response = await request(access.url)
      .post('/auth')
      .set('authorization', `Bearer ${master}`)
      .set('content-type', 'application/json')
      .send('{"email": ')
      .expect(400);
    expect(response.body.codigo).toBe('json_invalido');
    expect((await as(master).get('/auth').expect(200)).body.total).toBe(before);
  });

  it('When fields have wrong types or are unknown, then 422 listing each', async () => {
    const response = await as(master).post('/auth', { email: 42, perfil: 'colaborador', extra: true }).expect(422);
    expect(response.body.codigo).toBe('dados_invalidos');
    expect(response.body.erros.map((e: { caminho: string }) => e.caminho).sort()).toEqual(['', '/email']);
  });

  it('When the body is larger than the limit, then 413 in problem+json', async () => {
    const response = await as(master)
      .post('/auth', { email: 'x'.repeat(2_000_000), perfil: 'colaborador' })
      .expect(413);
    expect(response.headers['content-type']).toMatch(/problem\+json/);
    expect(response.body.codigo).toBe('corpo_grande_demais');
  });
});

describe('GET /auth, /auth/autocomplete, /auth/filtro, /auth/{id}', () => {
  let ids: Record<string, string>;
  beforeAll(async () => {
    ids = {};
    for (const email of [
      'zeca@empresa.com.br',
      'bia@empresa.com.br',
      'caio@empresa.com.br',
      'apagado@empresa.com.br',
    ]) {
      ids[email] = (await criar(email).expect(201)).body.id;
    }
    await as(master).patch(`/auth/${ids['caio@empresa.com.br']}`, { ativo: false }).expect(200);
    await as(master).delete(`/auth/${ids['apagado@empresa.com.br']}`).expect(204);
  });

  it('When listing, then ordered by perfil then e-mail, default page 1 of 10, deleted ones absent from items and total', async () => {
    const all = await as(master).get('/auth?tamanho=1000').expect(200);
    expect(all.body.pagina).toBe(1);
    expect(all.body.tamanho).toBe(1000);
    const emails = all.body.itens.map((a: { email: string }) => a.email);
    expect(emails).not.toContain('apagado@empresa.com.br');
    expect(all.body.total).toBe(all.body.itens.length);
    const keys = all.body.itens.map((a: { perfil: string; email: string }) => `${a.perfil} ${a.email}`);
    expect(keys).toEqual([...keys].sort());
    const first = await as(master).get('/auth').expect(200);
    expect(first.body.tamanho).toBe(10);
    expect(first.body.itens.length).toBe(Math.min(10, all.body.total));
  });

  it('When pagina is 2 and tamanho 2, then the third and fourth items come', async () => {
    const all = (await as(master).get('/auth?tamanho=1000').expect(200)).body.itens;
    const second = await as(master).get('/auth?pagina=2&tamanho=2').expect(200);
    expect(second.body.itens.map((a: { id: string }) => a.id)).toEqual(
      all.slice(2, 4).map((a: { id: string }) => a.id),
    );
  });

  it('When the page is past the end, then no items and the real total', async () => {
    const all = (await as(master).get('/auth?tamanho=1000').expect(200)).body;
    const past = await as(master).get('/auth?pagina=999&tamanho=10').expect(200);
    expect(past.body).toEqual({ itens: [], pagina: 999, tamanho: 10, total: all.total });
  });

  it('When pagina and tamanho are huge, then an empty page, not an error', async () => {
    const huge = 'pagina=999999999999999&tamanho=999999999999999';
    for (const path of ['/auth', '/auth/autocomplete']) {
      const response = await as(master).get(`${path}?${huge}`).expect(200);
      expect(response.body.itens).toEqual([]);
    }
  });

  it('When pagina or tamanho is below 1, then 1; when not an integer, then 400', async () => {
    const response = await as(master).get('/auth?pagina=0&tamanho=-5').expect(200);
    expect(response.body).toMatchObject({ pagina: 1, tamanho: 1 });
    expect((await as(master).get('/auth?pagina=abc').expect(400)).body.codigo).toBe('consulta_invalida');
  });

  it('When autocomplete searches part of the e-mail in any case, then only id, email and perfil, by e-mail', async () => {
    const response = await as(master).get('/auth/autocomplete?busca=CAI').expect(200);
    expect(response.body.itens).toEqual([
      { id: ids['caio@empresa.com.br'], email: 'caio@empresa.com.br', perfil: 'colaborador' },
    ]);
    const byPerfil = await as(master).get('/auth/autocomplete?perfil=master&tamanho=100').expect(200);
    expect(byPerfil.body.itens.every((a: { perfil: string }) => a.perfil === 'master')).toBe(true);
    const all = await as(master).get('/auth/autocomplete?tamanho=100').expect(200);
    const emails = all.body.itens.map((a: { email: string }) => a.email);
    expect(emails).toEqual([...emails].sort());
    expect(emails).not.toContain('apagado@empresa.com.br');
  });

  it('When the search text has LIKE wildcards, then they match only themselves', async () => {
    expect((await as(master).get('/auth/autocomplete?busca=_').expect(200)).body.total).toBe(0);
    expect((await as(master).get('/auth/filtro?email=%25').expect(200)).body).toEqual([]);
  });

  it('When filtro combines email, perfil and ativo, then all matches without pagination, by e-mail', async () => {
    const inactive = await as(master).get('/auth/filtro?ativo=false').expect(200);
    expect(inactive.body.map((a: { email: string }) => a.email)).toEqual(['caio@empresa.com.br']);
    const some = await as(master).get('/auth/filtro?email=I&perfil=colaborador').expect(200);
    const emails = some.body.map((a: { email: string }) => a.email);
    expect(emails).toEqual(expect.arrayContaining(['bia@empresa.com.br', 'caio@empresa.com.br']));
    expect(emails).toEqual([...emails].sort());
    const none = await as(master).get('/auth/filtro').expect(200);
    expect(none.body.map((a: { email: string }) => a.email)).not.toContain('apagado@empresa.com.br');
    expect((await as(master).get('/auth/filtro?ativo=talvez').expect(400)).body.codigo).toBe('consulta_invalida');
  });

  it('When an access was deleted, then GET by id answers 404 and the person can no longer sign in', async () => {
    await as(master).get(`/auth/${ids['apagado@empresa.com.br']}`).expect(404);
    const token = await identity.userToken({ email: 'apagado@empresa.com.br' });
    expect((await as(token).get('/auth/acesso').expect(403)).body.codigo).toBe('acesso_nao_cadastrado');
  });

  it('When an access was deleted, then its e-mail may be registered again as a new access (no restore)', async () => {
    const again = await criar('apagado@empresa.com.br').expect(201);
    expect(again.body.id).not.toBe(ids['apagado@empresa.com.br']);
    await as(master).get(`/auth/${ids['apagado@empresa.com.br']}`).expect(404);
  });

  it('When the id is unknown or not a uuid, then 404', async () => {
    await as(master).get('/auth/0190a0c2-0000-7000-8000-000000000000').expect(404);
    await as(master).get('/auth/nao-existe').expect(404);
  });

  it('When the caller has another colaboradores permission (deletar only), then reads are allowed', async () => {
    const token = await access.userWith('so-apaga@empresa.com.br', { colaboradores: { deletar: true } });
    await as(token).get('/auth').expect(200);
    await as(token).get('/auth/filtro').expect(200);
    await as(token).get('/auth/autocomplete').expect(200);
  });

  it('When the caller has no colaboradores permission, then reads are 403', async () => {
    const token = await access.userWith('sem-colab@empresa.com.br', { configuracoes: { ler: true } });
    await as(token).get('/auth').expect(403);
    await as(token).get(`/auth/${ids['bia@empresa.com.br']}`).expect(403);
  });
});

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

const call = (method: 'get' | 'post' | 'patch' | 'delete', path: string, token = master) =>
  request(access.url)[method](path).set('authorization', `Bearer ${token}`);
const none = { ler: false, criar: false, editar: false, deletar: false };

describe('Access profiles (/perfil-de-acesso)', () => {
  it('When created, then 201 with every area and absent actions false', async () => {
    const response = await call('post', '/perfil-de-acesso')
      .send({ nome: ' Suporte ', permissoes: { monitoramento: { ler: true } } })
      .expect(201);
    expect(response.body).toMatchObject({
      nome: 'Suporte',
      permissoes: {
        monitoramento: { ...none, ler: true },
        aplicativos: none,
        colaboradores: none,
        configuracoes: none,
      },
    });
  });

  it('When the name repeats in another case, then 409 nome_em_uso', async () => {
    await call('post', '/perfil-de-acesso').send({ nome: 'Auditoria', permissoes: {} }).expect(201);
    expect(
      (await call('post', '/perfil-de-acesso').send({ nome: 'AUDITORIA', permissoes: {} }).expect(409)).body.codigo,
    ).toBe('nome_em_uso');
  });

  it('When the name holds no visible character (zero-width space, blanks, NUL), then 422 on /nome and nothing is created', async () => {
    const antes = (await call('get', '/perfil-de-acesso?tamanho=1').expect(200)).body.total;
    for (const nome of ['\u200B', ' \u3164 ', '\u00AD\u2060', 'a\u0000b', 'x'.repeat(121)]) {
      const response = await call('post', '/perfil-de-acesso').send({ nome, permissoes: {} }).expect(422);
      expect(response.body.erros[0].caminho).toBe('/nome');
    }
    expect((await call('get', '/perfil-de-acesso?tamanho=1').expect(200)).body.total).toBe(antes);
  });

  it('When a name differs from another only by zero-width characters or case, then 409 nome_em_uso', async () => {
    await call('post', '/perfil-de-acesso').send({ nome: 'pz-x', permissoes: {} }).expect(201);
    for (const nome of ['pz-x\u200B', 'P\u00ADZ-\uFEFFX', '\u2060pz-x']) {
      expect((await call('post', '/perfil-de-acesso').send({ nome, permissoes: {} }).expect(409)).body.codigo).toBe(
        'nome_em_uso',
      );
    }
    const outro = (await call('post', '/perfil-de-acesso').send({ nome: 'pz-y', permissoes: {} }).expect(201)).body.id;
    await call('patch', `/perfil-de-acesso/${outro}`).send({ nome: 'pz-x\u200C' }).expect(409);
  });

  it('When the name comes decomposed (NFD) with spaces around, then it is stored trimmed in NFC and its composed twin is 409', async () => {
    const decomposto = ' Gere\u0302ncia ';
    const response = await call('post', '/perfil-de-acesso').send({ nome: decomposto, permissoes: {} }).expect(201);
    expect(response.body.nome).toBe('Ger\u00EAncia');
    await call('post', '/perfil-de-acesso').send({ nome: 'ger\u00EAncia', permissoes: {} }).expect(409);
  });

  it('When permissoes names an unknown area or action, then 422', async () => {
    await call('post', '/perfil-de-acesso')
      .send({ nome: 'Errado', permissoes: { financeiro: { ler: true } } })
      .expect(422);
    await call('post', '/perfil-de-acesso')
      .send({ nome: 'Errado', permissoes: { monitoramento: { aprovar: true } } })
      .expect(422);
  });

  it('When listing, autocompleting and filtering, then by name, with the page frame', async () => {
    for (const nome of ['Zeta', 'Alfa', 'Beta'])
      await call('post', '/perfil-de-acesso').send({ nome, permissoes: {} }).expect(201);
    const pageBody = (await call('get', '/perfil-de-acesso?tamanho=100').expect(200)).body;
    const nomes = pageBody.itens.map((p: { nome: string }) => p.nome);
    expect(nomes).toEqual([...nomes].sort((a: string, b: string) => a.localeCompare(b, 'pt-BR')));
    expect(Object.keys(pageBody).sort()).toEqual(['itens', 'pagina', 'tamanho', 'total']);
    expect((await call('get', '/perfil-de-acesso/autocomplete?busca=alf').expect(200)).body.itens).toEqual([
      { id: expect.any(String), nome: 'Alfa' },
    ]);
    expect(
      (await call('get', '/perfil-de-acesso/filtro?busca=eta').expect(200)).body.map((p: { nome: string }) => p.nome),
    ).toEqual(['Beta', 'Zeta']);
  });

  it('When names differ in case and accents, then they are listed as a Portuguese reader expects', async () => {
    for (const nome of ['Banana', 'abacate', 'Árvore', 'cereja'])
      await call('post', '/perfil-de-acesso').send({ nome, permissoes: {} }).expect(201);
    const nomes = (await call('get', '/perfil-de-acesso/filtro').expect(200)).body.map((p: { nome: string }) => p.nome);
    expect(nomes.filter((n: string) => ['Banana', 'abacate', 'Árvore', 'cereja'].includes(n))).toEqual([
      'abacate',
      'Árvore',
      'Banana',
      'cereja',
    ]);
  });

  it('When renamed and its permissions change, then GET shows them', async () => {
    const id = (await call('post', '/perfil-de-acesso').send({ nome: 'Velho', permissoes: {} }).expect(201)).body.id;
    await call('patch', `/perfil-de-acesso/${id}`)
      .send({ nome: 'Novo', permissoes: { aplicativos: { ler: true } } })
      .expect(200);
    expect((await call('get', `/perfil-de-acesso/${id}`).expect(200)).body).toMatchObject({
      nome: 'Novo',
      permissoes: { aplicativos: { ...none, ler: true } },
    });
    await call('patch', `/perfil-de-acesso/${id}`).send({ cor: 'azul' }).expect(422);
  });

  it('When an access uses the profile, then DELETE is 409; when none does, then 204 and 404 after', async () => {
    const token = await access.userWith('usa-perfil@empresa.com.br', { monitoramento: { ler: true } });
    const me = (await call('get', '/auth/acesso', token).expect(200)).body;
    const [perfil] = (
      await call('get', `/perfil-de-acesso/filtro?busca=${encodeURIComponent(me.perfil_acesso)}`).expect(200)
    ).body;
    expect((await call('delete', `/perfil-de-acesso/${perfil.id}`).expect(409)).body.codigo).toBe('perfil_em_uso');
    const livre = (await call('post', '/perfil-de-acesso').send({ nome: 'Livre', permissoes: {} }).expect(201)).body.id;
    await call('delete', `/perfil-de-acesso/${livre}`).expect(204);
    await call('get', `/perfil-de-acesso/${livre}`).expect(404);
  });

  it('When the caller lacks configuracoes, then 403 on reads and writes', async () => {
    const token = await access.userWith('sem-config@empresa.com.br', { colaboradores: { ler: true } });
    await call('get', '/perfil-de-acesso', token).expect(403);
    await call('post', '/perfil-de-acesso', token).send({ nome: 'X', permissoes: {} }).expect(403);
  });
});

describe('Collaborators (/colaborador)', () => {
  it('When a profile is assigned, then the access gets its permissions at once', async () => {
    const id = (await call('post', '/auth').send({ email: 'novato@empresa.com.br', perfil: 'colaborador' }).expect(201))
      .body.id;
    const token = await identity.userToken({ email: 'novato@empresa.com.br' });
    expect((await call('get', '/auth/acesso', token).expect(200)).body.permissoes.colaboradores).toEqual(none);
    const perfil = (
      await call('post', '/perfil-de-acesso')
        .send({ nome: 'Gente', permissoes: { colaboradores: { ler: true } } })
        .expect(201)
    ).body;
    const response = await call('patch', `/colaborador/${id}`).send({ perfil_de_acesso_id: perfil.id }).expect(200);
    expect(response.body).toMatchObject({
      id,
      email: 'novato@empresa.com.br',
      nome: 'novato@empresa.com.br',
      vinculado: false,
      perfil_de_acesso_id: perfil.id,
      perfil_de_acesso_nome: 'Gente',
    });
    expect((await call('get', '/auth/acesso', token).expect(200)).body).toMatchObject({
      perfil_acesso: 'Gente',
      permissoes: { colaboradores: { ...none, ler: true } },
    });
    await call('patch', `/colaborador/${id}`).send({ perfil_de_acesso_id: null }).expect(200);
    expect((await call('get', '/auth/acesso', token).expect(200)).body.perfil_acesso).toBeNull();
  });

  it('When the profile does not exist, then 422; when the collaborator does not, then 404', async () => {
    const id = (
      await call('post', '/auth').send({ email: 'perdido@empresa.com.br', perfil: 'colaborador' }).expect(201)
    ).body.id;
    expect(
      (
        await call('patch', `/colaborador/${id}`)
          .send({ perfil_de_acesso_id: '0190a0c2-0000-7000-8000-000000000000' })
          .expect(422)
      ).body.codigo,
    ).toBe('perfil_inexistente');
    await call('get', '/colaborador/0190a0c2-0000-7000-8000-000000000000').expect(404);
  });

  it('When listing, then only non-deleted collaborators (no masters), by e-mail; autocomplete gives id, email, nome', async () => {
    const id = (
      await call('post', '/auth').send({ email: 'removido@empresa.com.br', perfil: 'colaborador' }).expect(201)
    ).body.id;
    await call('delete', `/auth/${id}`).expect(204);
    const itens = (await call('get', '/colaborador?tamanho=500').expect(200)).body.itens;
    const emails = itens.map((c: { email: string }) => c.email);
    expect(emails).not.toContain('removido@empresa.com.br');
    expect(emails).not.toContain('master@empresa.com.br');
    expect(emails).toEqual([...emails].sort());
    const auto = (await call('get', '/colaborador/autocomplete?busca=novato').expect(200)).body.itens;
    expect(auto).toEqual([{ id: expect.any(String), email: 'novato@empresa.com.br', nome: 'novato@empresa.com.br' }]);
    expect((await call('get', '/colaborador/filtro?busca=NOVATO').expect(200)).body).toHaveLength(1);
  });
});

import { randomUUID } from 'node:crypto';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { todasAsPermissoes } from '@hub/contracts';
import { startTestIdentity, type TestIdentity, unsignedToken } from '@hub/testing';
import request from 'supertest';
import { startFunctionForTests, type TestFunction } from '../../function.test-support';

let identity: TestIdentity;
let access: TestAccess;
let fn: TestFunction;
let master: string;
let everyPermission: string;

const api = () => request(fn.url);
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const prefixo = () => `t${randomUUID().slice(0, 8)}`;

async function criar(nome: string) {
  const response = await api().post('/funcao').set(auth(master)).send({ nome });
  expect(response.status).toBe(201);
  return response.body as { id: string; nome: string };
}

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  fn = await startFunctionForTests(identity, access);
  master = await access.masterToken();
  everyPermission = await access.userWith(`todas@${access.companyDomain}`, todasAsPermissoes());
});

afterAll(async () => {
  await fn?.close();
  await access?.close();
  await identity?.close();
});

const routes = (id: string) =>
  [
    ['get', '/funcao'],
    ['post', '/funcao'],
    ['get', '/funcao/autocomplete'],
    ['get', '/funcao/filtro'],
    ['get', `/funcao/${id}`],
    ['patch', `/funcao/${id}`],
  ] as const;

describe('who may call area B', () => {
  test('When no token is sent, then all six routes answer 401', async () => {
    const { id } = await criar(`${prefixo()} sem token`);
    for (const [method, path] of routes(id)) {
      const response = await api()[method](path).send({ nome: 'x' });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
    }
  });

  test('When an unsigned token is sent, then 401', async () => {
    const token = unsignedToken({ sub: 'x', email: `master@${access.companyDomain}`, master: true, typ: 'usuario' });
    expect((await api().get('/funcao').set(auth(token))).status).toBe(401);
  });

  test('When a non-master holds every permission of every area, then all six routes answer 403', async () => {
    const { id } = await criar(`${prefixo()} só master`);
    for (const [method, path] of routes(id)) {
      const response = await api()
        [method](path)
        .set(auth(everyPermission))
        .send({ nome: `${prefixo()} tentativa` });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 403 });
      expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });

  test('When a master calls for the first time, then the access registers it and the route answers', async () => {
    const newMaster = await access.masterToken(`outro.master@${access.companyDomain}`);
    expect((await api().get('/funcao').set(auth(newMaster))).status).toBe(200);
  });

  test('When the non-master access is deactivated, then it is still refused with 403', async () => {
    const email = `inativo@${access.companyDomain}`;
    const token = await access.userWith(email, todasAsPermissoes());
    await access.deactivate(email);
    expect((await api().get('/funcao').set(auth(token))).status).toBe(403);
  });
});

describe('POST /funcao', () => {
  test('When a master creates a function, then 201 with exactly the fields of Funcao', async () => {
    const nome = `${prefixo()} Analista`;
    const response = await api().post('/funcao').set(auth(master)).send({ nome });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual([
      'atualizado_em',
      'criado_em',
      'id',
      'nome',
      'quantidade_de_colaboradores',
    ]);
    expect(response.body).toMatchObject({ nome, quantidade_de_colaboradores: 0 });
    expect(response.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(response.body.criado_em).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(response.body.atualizado_em).toBe(response.body.criado_em);
    expect((await api().get(`/funcao/${response.body.id}`).set(auth(master))).body).toEqual(response.body);
  });

  test('When nome has surrounding spaces, then it is stored trimmed', async () => {
    const nome = `${prefixo()} Aparado`;
    expect((await criar(`   ${nome}  `)).nome).toBe(nome);
  });

  test('When nome is empty or only spaces, then 422', async () => {
    for (const nome of ['', '    ']) {
      const response = await api().post('/funcao').set(auth(master)).send({ nome });
      expect(response.status).toBe(422);
      expect(response.body.erros[0].caminho).toBe('/nome');
    }
  });

  test('When nome has 1 character, then 201', async () => {
    const letra = String.fromCodePoint(0x4e00 + Math.floor(Math.random() * 20_000));
    expect((await criar(letra)).nome).toBe(letra);
  });

  test('When nome has 120 characters, then 201; with 121, then 422', async () => {
    const base = prefixo();
    expect((await criar(base.padEnd(120, 'x'))).nome).toHaveLength(120);
    const response = await api()
      .post('/funcao')
      .set(auth(master))
      .send({ nome: base.padEnd(121, 'y') });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ status: 422, codigo: 'dados_invalidos', erros: [{ caminho: '/nome' }] });
  });

  test('When nome is missing, not a string, or an unknown field is sent, then 422', async () => {
    for (const body of [{}, { nome: 42 }, { nome: null }, { nome: `${prefixo()} ok`, extra: true }]) {
      expect((await api().post('/funcao').set(auth(master)).send(body)).status).toBe(422);
    }
  });

  test('When the name repeats another in a different case, then 409 funcao_duplicada', async () => {
    const nome = `${prefixo()} Gerente de Projetos`;
    await criar(nome);
    const response = await api()
      .post('/funcao')
      .set(auth(master))
      .send({ nome: `  ${nome.toUpperCase()} ` });
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ status: 409, codigo: 'funcao_duplicada' });
  });

  test('When two creations of the same name (in different cases) race, then exactly one is 201 and the other 409', async () => {
    for (let i = 0; i < 5; i += 1) {
      const nome = `${prefixo()} Corrida`;
      const answers = await Promise.all([
        api().post('/funcao').set(auth(master)).send({ nome }),
        api().post('/funcao').set(auth(master)).send({ nome: nome.toLowerCase() }),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
      const found = await api().get('/funcao/filtro').query({ busca: nome }).set(auth(master));
      expect(found.body).toHaveLength(1);
    }
  });
});

describe('lists', () => {
  test('When GET /funcao is called, then the page is alphabetical (case and accents as a reader expects), starting at pagina 1', async () => {
    const p = prefixo();
    for (const nome of ['cereja', 'Banana', 'Árvore', 'abacate', 'Zebra', 'ameixa']) await criar(`${p} ${nome}`);
    const response = await api().get('/funcao').query({ busca: p }).set(auth(master));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ pagina: 1, tamanho: 10, total: 6 });
    expect(response.body.itens.map((f: { nome: string }) => f.nome.slice(p.length + 1))).toEqual([
      'abacate',
      'ameixa',
      'Árvore',
      'Banana',
      'cereja',
      'Zebra',
    ]);
    expect(Object.keys(response.body.itens[0]).sort()).toEqual([
      'atualizado_em',
      'criado_em',
      'id',
      'nome',
      'quantidade_de_colaboradores',
    ]);

    const second = await api().get('/funcao').query({ busca: p, pagina: 2, tamanho: 4 }).set(auth(master));
    expect(second.body).toMatchObject({ pagina: 2, tamanho: 4, total: 6 });
    expect(second.body.itens.map((f: { nome: string }) => f.nome.slice(p.length + 1))).toEqual(['cereja', 'Zebra']);
  });

  test('When tamanho is absent, then 10 per page; 0 becomes 1; 1000 is answered as 500', async () => {
    const p = prefixo();
    for (let i = 0; i < 12; i += 1) await criar(`${p} ${String(i).padStart(2, '0')}`);
    const byDefault = await api().get('/funcao').query({ busca: p }).set(auth(master));
    expect(byDefault.body).toMatchObject({ pagina: 1, tamanho: 10, total: 12 });
    expect(byDefault.body.itens).toHaveLength(10);
    const zero = await api().get('/funcao').query({ busca: p, tamanho: 0, pagina: 0 }).set(auth(master));
    expect(zero.body).toMatchObject({ pagina: 1, tamanho: 1 });
    expect(zero.body.itens).toHaveLength(1);
    const huge = await api().get('/funcao').query({ busca: p, tamanho: 1000 }).set(auth(master));
    expect(huge.body).toMatchObject({ tamanho: 500, total: 12 });
    expect(huge.body.itens).toHaveLength(12);
  });

  test('When pagina or tamanho is not an integer, then 400', async () => {
    expect((await api().get('/funcao').query({ tamanho: 'dez' }).set(auth(master))).status).toBe(400);
    expect((await api().get('/funcao/autocomplete').query({ pagina: '1.5' }).set(auth(master))).status).toBe(400);
  });

  test('When busca is given, then it matches a substring of the name without regard to case', async () => {
    const p = prefixo();
    await criar(`${p} Desenvolvedora Backend`);
    await criar(`${p} Designer`);
    await criar(`${p} Contadora`);
    const response = await api()
      .get('/funcao')
      .query({ busca: `${p.toUpperCase()} DE` })
      .set(auth(master));
    expect(response.body.itens.map((f: { nome: string }) => f.nome)).toEqual([
      `${p} Desenvolvedora Backend`,
      `${p} Designer`,
    ]);
    const inner = await api().get('/funcao/filtro').query({ busca: 'DORA' }).set(auth(master));
    const mine = inner.body.map((f: { nome: string }) => f.nome).filter((n: string) => n.startsWith(p));
    expect(mine).toEqual([`${p} Contadora`, `${p} Desenvolvedora Backend`]);
  });

  test('When busca holds % or _, then they are plain characters', async () => {
    const p = prefixo();
    await criar(`${p} 100% remoto`);
    await criar(`${p} 100 remoto`);
    const response = await api()
      .get('/funcao/filtro')
      .query({ busca: `${p} 100%` })
      .set(auth(master));
    expect(response.body.map((f: { nome: string }) => f.nome)).toEqual([`${p} 100% remoto`]);
  });

  test('When GET /funcao/autocomplete is called, then only id and nome come, alphabetical, default 10, at most 100', async () => {
    const p = prefixo();
    for (let i = 11; i >= 0; i -= 1) await criar(`${p} item ${String(i).padStart(2, '0')}`);
    const response = await api().get('/funcao/autocomplete').query({ busca: p }).set(auth(master));
    expect(response.body).toMatchObject({ pagina: 1, tamanho: 10, total: 12 });
    expect(response.body.itens[0]).toEqual({ id: expect.any(String), nome: `${p} item 00` });
    expect(Object.keys(response.body.itens[0]).sort()).toEqual(['id', 'nome']);
    expect(response.body.itens.map((f: { nome: string }) => f.nome)).toEqual(
      Array.from({ length: 10 }, (_, i) => `${p} item ${String(i).padStart(2, '0')}`),
    );
    const huge = await api()
      .get('/funcao/autocomplete')
      .query({ busca: p, tamanho: 1000, pagina: 1 })
      .set(auth(master));
    expect(huge.body).toMatchObject({ tamanho: 100, total: 12 });
    expect(huge.body.itens).toHaveLength(12);
  });

  test('When GET /funcao/filtro is called, then every match comes, alphabetical, without pages', async () => {
    const p = prefixo();
    for (let i = 14; i >= 0; i -= 1) await criar(`${p} f${String(i).padStart(2, '0')}`);
    const response = await api().get('/funcao/filtro').query({ busca: p }).set(auth(master));
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
    expect(response.body.map((f: { nome: string }) => f.nome)).toEqual(
      Array.from({ length: 15 }, (_, i) => `${p} f${String(i).padStart(2, '0')}`),
    );
    expect(Object.keys(response.body[0]).sort()).toEqual([
      'atualizado_em',
      'criado_em',
      'id',
      'nome',
      'quantidade_de_colaboradores',
    ]);
  });
});

describe('GET and PATCH /funcao/{id}', () => {
  test('When the id is unknown or not a uuid, then 404', async () => {
    expect((await api().get(`/funcao/${randomUUID()}`).set(auth(master))).status).toBe(404);
    expect((await api().get('/funcao/nao-e-um-id').set(auth(master))).status).toBe(404);
    expect((await api().patch(`/funcao/${randomUUID()}`).set(auth(master)).send({ nome: 'x' })).status).toBe(404);
  });

  test('When PATCH renames, then 200 with the new name and a later atualizado_em', async () => {
    const criada = (
      await api()
        .post('/funcao')
        .set(auth(master))
        .send({ nome: `${prefixo()} Antes` })
    ).body;
    const nome = `${prefixo()} Depois`;
    const response = await api()
      .patch(`/funcao/${criada.id}`)
      .set(auth(master))
      .send({ nome: ` ${nome} ` });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: criada.id, nome, criado_em: criada.criado_em });
    expect(Date.parse(response.body.atualizado_em)).toBeGreaterThanOrEqual(Date.parse(criada.atualizado_em));
  });

  test('When PATCH sends no name (absent or null), then 200 and nothing changes', async () => {
    const criada = await criar(`${prefixo()} Fixa`);
    for (const body of [{}, { nome: null }]) {
      const response = await api().patch(`/funcao/${criada.id}`).set(auth(master)).send(body);
      expect(response.status).toBe(200);
      expect(response.body).toEqual(criada);
    }
  });

  test('When PATCH sends an unknown field, then 422', async () => {
    const criada = await criar(`${prefixo()} Estrita`);
    const response = await api().patch(`/funcao/${criada.id}`).set(auth(master)).send({ nome: 'x', ativo: false });
    expect(response.status).toBe(422);
    expect(response.body.erros[0].mensagem).toMatch(/ativo/);
  });

  test('When PATCH breaks the length rule, then 422', async () => {
    const criada = await criar(`${prefixo()} Limite`);
    for (const nome of ['', '  ', 'z'.repeat(121)]) {
      expect((await api().patch(`/funcao/${criada.id}`).set(auth(master)).send({ nome })).status).toBe(422);
    }
  });

  test("When PATCH takes another function's name in a different case, then 409; changing only its own case is allowed", async () => {
    const p = prefixo();
    await criar(`${p} Ocupada`);
    const outra = await criar(`${p} Livre`);
    const taken = await api()
      .patch(`/funcao/${outra.id}`)
      .set(auth(master))
      .send({ nome: `${p} OCUPADA` });
    expect(taken.status).toBe(409);
    expect(taken.body.codigo).toBe('funcao_duplicada');
    const ownCase = await api()
      .patch(`/funcao/${outra.id}`)
      .set(auth(master))
      .send({ nome: `${p} LIVRE` });
    expect(ownCase.status).toBe(200);
    expect(ownCase.body.nome).toBe(`${p} LIVRE`);
  });

  test('There is no DELETE route for functions', async () => {
    const criada = await criar(`${prefixo()} Eterna`);
    expect((await api().delete(`/funcao/${criada.id}`).set(auth(master))).status).toBe(404);
    expect((await api().get(`/funcao/${criada.id}`).set(auth(master))).status).toBe(200);
  });
});

test('When readiness is asked, then the database and the broker are reported ready', async () => {
  const response = await api().get('/saude/prontidao');
  expect(response.status).toBe(200);
  expect(response.body.dependencias).toEqual({ postgresql: 'ok', rabbitmq: 'ok' });
});

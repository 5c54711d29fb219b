import { randomUUID } from 'node:crypto';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { startTestIdentity, type TestIdentity } from '@hub/testing';
import request from 'supertest';
import { startFunctionForTests, type TestFunction } from '../../function.test-support';

let identity: TestIdentity;
let access: TestAccess;
let fn: TestFunction;
let master: string;

const api = () => request(fn.url);
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const prefixo = () => `n${randomUUID().slice(0, 8)}`;
const criar = (nome: string) => api().post('/funcao').set(auth(master)).send({ nome });
const todasCom = async (busca: string) =>
  (await api().get('/funcao/filtro').query({ busca }).set(auth(master))).body as { nome: string }[];

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  fn = await startFunctionForTests(identity, access);
  master = await access.masterToken();
});

afterAll(async () => {
  await fn?.close();
  await access?.close();
  await identity?.close();
});

describe('names of functions', () => {
  test('When nome is only a zero-width space or other invisible characters, then 422 and nothing is stored', async () => {
    for (const nome of ['\u200B', ' \u200B\u200D ', '\u00AD', '\u3164', '\u0301']) {
      const response = await criar(nome);
      expect({ nome, status: response.status, caminho: response.body.erros?.[0]?.caminho }).toEqual({
        nome,
        status: 422,
        caminho: '/nome',
      });
    }
  });

  test("When 'pz-x' exists and 'pz-x' + U+200B is created, then 409 funcao_duplicada; so for a soft hyphen or BOM inside", async () => {
    const nome = `${prefixo()}-pz-x`;
    expect((await criar(nome)).status).toBe(201);
    for (const parecido of [
      `${nome}\u200B`,
      `\uFEFF${nome}`,
      `${nome.slice(0, 3)}\u00AD${nome.slice(3).toUpperCase()}`,
    ]) {
      const response = await criar(parecido);
      expect({ parecido, status: response.status, codigo: response.body.codigo }).toEqual({
        parecido,
        status: 409,
        codigo: 'funcao_duplicada',
      });
    }
    expect(await todasCom(nome.slice(0, 9))).toHaveLength(1);
  });

  test("When a function is renamed to another's name plus a zero-width joiner, then 409 and it keeps its name", async () => {
    const p = prefixo();
    expect((await criar(`${p} Ocupada`)).status).toBe(201);
    const livre = await criar(`${p} Livre`);
    const response = await api()
      .patch(`/funcao/${livre.body.id}`)
      .set(auth(master))
      .send({ nome: `${p} Ocu\u200Dpada` });
    expect(response.status).toBe(409);
    expect((await api().get(`/funcao/${livre.body.id}`).set(auth(master))).body.nome).toBe(`${p} Livre`);
  });

  test('When nome comes decomposed (NFD), then it is stored composed (NFC) and conflicts with the composed spelling', async () => {
    const p = prefixo();
    const decomposta = `${p} Te\u0301cnica`;
    const criada = await criar(decomposta);
    expect(criada.status).toBe(201);
    expect(criada.body.nome).toBe(`${p} T\u00E9cnica`);
    expect((await criar(`${p} T\u00C9CNICA`)).status).toBe(409);
  });
});

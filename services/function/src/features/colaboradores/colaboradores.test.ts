import { randomUUID } from 'node:crypto';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { publishMessage } from '@hub/broker';
import { type ColaboradorSincronizado, colaboradorSincronizado } from '@hub/contracts';
import { startTestIdentity, type TestIdentity } from '@hub/testing';
import request from 'supertest';
import { startFunctionForTests, type TestFunction } from '../../function.test-support';

let identity: TestIdentity;
let access: TestAccess;
let fn: TestFunction;
let master: string;

const auth = () => ({ authorization: `Bearer ${master}` });

async function criarFuncao(): Promise<string> {
  const response = await request(fn.url)
    .post('/funcao')
    .set(auth())
    .send({ nome: `Projeção ${randomUUID()}` });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function quantidade(id: string): Promise<number> {
  const response = await request(fn.url).get(`/funcao/${id}`).set(auth());
  expect(response.status).toBe(200);
  return response.body.quantidade_de_colaboradores;
}

type Parcial = Partial<ColaboradorSincronizado> & Pick<ColaboradorSincronizado, 'termoauth_id' | 'versao'>;

const mensagemDe = (c: Parcial): ColaboradorSincronizado => ({
  email: `${c.termoauth_id}@empresa.com.br`,
  nome: `Pessoa ${c.termoauth_id}`,
  funcao_id: null,
  ativo: true,
  removido: false,
  ocorrido_em: new Date().toISOString(),
  ...c,
});

/** Publishes a real synchronisation message to the identity exchange and waits until it was handled. */
async function sincronizar(c: Parcial) {
  const mensagem = mensagemDe(c);
  await publishMessage(fn.broker, colaboradorSincronizado, mensagem);
  return fn.handled(mensagem.termoauth_id, mensagem.versao);
}

const pessoa = () => `tauth-${randomUUID()}`;

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

test('When a collaborator is created in a function, then the function counts it', async () => {
  const funcao = await criarFuncao();
  expect(await sincronizar({ termoauth_id: pessoa(), versao: 1, funcao_id: funcao })).toEqual({ changed: true });
  expect(await sincronizar({ termoauth_id: pessoa(), versao: 1, funcao_id: funcao })).toEqual({ changed: true });
  expect(await quantidade(funcao)).toBe(2);
});

test('When a collaborator moves to another function, then the old one stops counting it and the new one counts it', async () => {
  const [de, para] = [await criarFuncao(), await criarFuncao()];
  const id = pessoa();
  await sincronizar({ termoauth_id: id, versao: 10, funcao_id: de });
  expect(await quantidade(de)).toBe(1);
  await sincronizar({ termoauth_id: id, versao: 11, funcao_id: para });
  expect([await quantidade(de), await quantidade(para)]).toEqual([0, 1]);
});

test('When a collaborator is deactivated, then it is not counted; reactivated, it is again', async () => {
  const funcao = await criarFuncao();
  const id = pessoa();
  await sincronizar({ termoauth_id: id, versao: 1, funcao_id: funcao });
  await sincronizar({ termoauth_id: id, versao: 2, funcao_id: funcao, ativo: false });
  expect(await quantidade(funcao)).toBe(0);
  await sincronizar({ termoauth_id: id, versao: 3, funcao_id: funcao, ativo: true });
  expect(await quantidade(funcao)).toBe(1);
});

test('When a collaborator is removed, then it is no longer counted', async () => {
  const funcao = await criarFuncao();
  const id = pessoa();
  await sincronizar({ termoauth_id: id, versao: 5, funcao_id: funcao });
  await sincronizar({ termoauth_id: id, versao: 6, funcao_id: funcao, removido: true });
  expect(await quantidade(funcao)).toBe(0);
});

test('When the same message arrives twice, then the second changes nothing', async () => {
  const funcao = await criarFuncao();
  const id = pessoa();
  const mensagem = { termoauth_id: id, versao: 7, funcao_id: funcao };
  expect(await sincronizar(mensagem)).toEqual({ changed: true });
  // Published again with the same versao (a redelivery, a duplicate send), even with other data.
  await publishMessage(fn.broker, colaboradorSincronizado, mensagemDe({ ...mensagem, nome: 'Duplicata' }));
  expect(await fn.handled(id, 7, 2)).toEqual({ changed: false });
  const { rows } = await rowsOf(id);
  expect(rows).toMatchObject([{ nome: `Pessoa ${id}`, versao: 7n }]);
  expect(await quantidade(funcao)).toBe(1);
});

test('When an older message arrives after a newer one, then it is ignored', async () => {
  const [nova, velha] = [await criarFuncao(), await criarFuncao()];
  const id = pessoa();
  expect(await sincronizar({ termoauth_id: id, versao: 200, funcao_id: nova })).toEqual({ changed: true });
  expect(await sincronizar({ termoauth_id: id, versao: 199, funcao_id: velha })).toEqual({ changed: false });
  expect([await quantidade(nova), await quantidade(velha)]).toEqual([1, 0]);
});

test('When an older message arrives after a removal, then the tombstone keeps the collaborator removed', async () => {
  const funcao = await criarFuncao();
  const id = pessoa();
  await sincronizar({ termoauth_id: id, versao: 30, funcao_id: funcao });
  await sincronizar({ termoauth_id: id, versao: 31, funcao_id: funcao, removido: true });
  await publishMessage(
    fn.broker,
    colaboradorSincronizado,
    mensagemDe({ termoauth_id: id, versao: 30, funcao_id: funcao }),
  );
  expect(await fn.handled(id, 30, 2)).toEqual({ changed: false });
  expect(await sincronizar({ termoauth_id: id, versao: 29, funcao_id: funcao })).toEqual({ changed: false });
  expect(await quantidade(funcao)).toBe(0);
  // The identity service may create it again later: a newer versao counts again.
  expect(await sincronizar({ termoauth_id: id, versao: 32, funcao_id: funcao })).toEqual({ changed: true });
  expect(await quantidade(funcao)).toBe(1);
});

test('When the removal arrives before the creation it follows, then the creation is ignored', async () => {
  const funcao = await criarFuncao();
  const id = pessoa();
  await sincronizar({ termoauth_id: id, versao: 9, funcao_id: funcao, removido: true });
  expect(await sincronizar({ termoauth_id: id, versao: 8, funcao_id: funcao })).toEqual({ changed: false });
  expect(await quantidade(funcao)).toBe(0);
});

test('When funcao_id comes in upper case, then it still names the function', async () => {
  const funcao = await criarFuncao();
  await sincronizar({ termoauth_id: pessoa(), versao: 1, funcao_id: funcao.toUpperCase() });
  expect(await quantidade(funcao)).toBe(1);
});

test('When the lists are read, then each function carries its count', async () => {
  const funcao = await criarFuncao();
  for (let i = 0; i < 3; i += 1) await sincronizar({ termoauth_id: pessoa(), versao: 1, funcao_id: funcao });
  const nome = (await request(fn.url).get(`/funcao/${funcao}`).set(auth())).body.nome;
  const lista = await request(fn.url).get('/funcao').query({ busca: nome }).set(auth());
  expect(lista.body.itens).toEqual([expect.objectContaining({ id: funcao, quantidade_de_colaboradores: 3 })]);
  const filtro = await request(fn.url).get('/funcao/filtro').query({ busca: nome }).set(auth());
  expect(filtro.body).toEqual([expect.objectContaining({ id: funcao, quantidade_de_colaboradores: 3 })]);
});

test('When a message breaks its schema, then it is dropped and the next messages still apply', async () => {
  const funcao = await criarFuncao();
  await fn.broker.publish(
    colaboradorSincronizado.exchange,
    colaboradorSincronizado.routingKey,
    Buffer.from('{"termoauth_id": 42'),
  );
  await fn.broker.publish(
    colaboradorSincronizado.exchange,
    colaboradorSincronizado.routingKey,
    Buffer.from(JSON.stringify({ termoauth_id: 'x' })),
  );
  await sincronizar({ termoauth_id: pessoa(), versao: 1, funcao_id: funcao });
  expect(await quantidade(funcao)).toBe(1);
});

async function rowsOf(termoauthId: string) {
  const rows = await fn.db.colaborador.findMany({ where: { termoauthId } });
  return { rows };
}

import { randomUUID } from 'node:crypto';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { type Broker, publishMessage } from '@hub/broker';
import { type ColaboradorSincronizado, colaboradorSincronizado, EXCHANGES, eventoDaPlataforma } from '@hub/contracts';
import { connectTestBroker, startTestIdentity, type TestIdentity, uniqueName, waitFor } from '@hub/testing';
import request from 'supertest';
import { startFunctionForTests, type TestFunction } from '../../function.test-support';

let identity: TestIdentity;
let access: TestAccess;
let fn: TestFunction;
let listener: Broker;
let master: string;
const queue = uniqueName('test.function.anuncios');
const anuncios: { messageId: unknown; contentType: unknown; routingKey: string; body: Record<string, unknown> }[] = [];

const auth = () => ({ authorization: `Bearer ${master}` });
const deFuncao = (funcaoId: string) =>
  anuncios.filter((a) => (a.body.dados as { funcao?: { id?: string } } | undefined)?.funcao?.id === funcaoId);

async function criarFuncao(nome = `Renomeável ${randomUUID()}`): Promise<string> {
  const response = await request(fn.url).post('/funcao').set(auth()).send({ nome });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function sincronizar(c: Partial<ColaboradorSincronizado> & Pick<ColaboradorSincronizado, 'termoauth_id'>) {
  const mensagem: ColaboradorSincronizado = {
    email: `${c.termoauth_id}@empresa.com.br`,
    nome: `Pessoa ${c.termoauth_id}`,
    funcao_id: null,
    ativo: true,
    removido: false,
    versao: 1,
    ocorrido_em: new Date().toISOString(),
    ...c,
  };
  await publishMessage(fn.broker, colaboradorSincronizado, mensagem);
  await fn.handled(mensagem.termoauth_id, mensagem.versao);
}

const outboxDe = (funcaoId: string) =>
  fn.db.outbox.count({ where: { body: { path: ['dados', 'funcao', 'id'], equals: funcaoId } } });

/** Every outbox row published and the test queue emptied: nothing more can still arrive. */
async function tudoEntregue() {
  await waitFor(async () => (await fn.db.outbox.count({ where: { publicadoEm: null } })) === 0, {
    what: 'the outbox published',
  });
  await waitFor(async () => (await listener.withChannel((channel) => channel.checkQueue(queue))).messageCount === 0, {
    what: 'the test queue drained',
  });
}

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  fn = await startFunctionForTests(identity, access);
  master = await access.masterToken();
  listener = await connectTestBroker('function-anuncios');
  await listener.withChannel(async (channel) => {
    await channel.assertQueue(queue, { durable: false });
    await channel.bindQueue(queue, EXCHANGES.eventosDaPlataforma, '#');
  });
  await listener.consume(
    queue,
    async (message) => {
      anuncios.push({
        messageId: message.properties.messageId,
        contentType: message.properties.contentType,
        routingKey: message.fields.routingKey,
        body: JSON.parse(message.content.toString('utf8')),
      });
    },
    { prefetch: 200 },
  );
});

afterAll(async () => {
  await listener?.withChannel((channel) => channel.deleteQueue(queue));
  await listener?.close();
  await fn?.close();
  await access?.close();
  await identity?.close();
});

test('When a function is renamed, then each of its collaborators is announced exactly once with the new name', async () => {
  const funcao = await criarFuncao();
  const outra = await criarFuncao();
  const ativos = Array.from({ length: 22 }, () => `tauth-${randomUUID()}`);
  const inativos = [`tauth-${randomUUID()}`, `tauth-${randomUUID()}`];
  const removido = `tauth-${randomUUID()}`;
  for (const id of ativos) await sincronizar({ termoauth_id: id, funcao_id: funcao });
  for (const id of inativos) await sincronizar({ termoauth_id: id, funcao_id: funcao, ativo: false });
  await sincronizar({ termoauth_id: removido, funcao_id: funcao });
  await sincronizar({ termoauth_id: removido, funcao_id: funcao, removido: true, versao: 2 });
  await sincronizar({ termoauth_id: `tauth-${randomUUID()}`, funcao_id: outra });
  // The projection keeps the latest data of each collaborator, and the announcement carries it.
  await sincronizar({ termoauth_id: ativos[0]!, funcao_id: funcao, nome: 'Nome Novo da Pessoa', versao: 2 });

  const nome = `Renomeada ${randomUUID()}`;
  const response = await request(fn.url).patch(`/funcao/${funcao}`).set(auth()).send({ nome });
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({ id: funcao, nome, quantidade_de_colaboradores: 22 });

  const esperados = [...ativos, ...inativos].sort();
  await waitFor(() => deFuncao(funcao).length >= esperados.length, { what: 'every announcement' });
  await tudoEntregue();
  const recebidos = deFuncao(funcao);
  expect(recebidos.map((a) => a.body.entidade_id).sort()).toEqual(esperados);
  expect(new Set(recebidos.map((a) => a.body.id)).size).toBe(esperados.length);

  for (const anuncio of recebidos) {
    const body = eventoDaPlataforma.schema.parse(anuncio.body);
    expect(anuncio.routingKey).toBe(eventoDaPlataforma.routingKey);
    expect(anuncio.messageId).toBe(body.id);
    expect(anuncio.contentType).toBe('application/json');
    expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body).toMatchObject({
      aplicativo_client_id: 'identidade',
      tipo_de_evento_nome: 'colaborador.atualizado',
      versao_do_esquema: 1,
      ocorrido_em: response.body.atualizado_em,
    });
    const termoauth = body.entidade_id;
    expect(body.dados).toEqual({
      termoauth_id: termoauth,
      email: `${termoauth}@empresa.com.br`,
      nome: termoauth === ativos[0] ? 'Nome Novo da Pessoa' : `Pessoa ${termoauth}`,
      ativo: !inativos.includes(termoauth),
      funcao: { id: funcao, nome },
    });
  }
  expect(deFuncao(outra)).toHaveLength(0);
});

test('When the function id is written in upper case, then the rename still announces its collaborators', async () => {
  const funcao = await criarFuncao();
  await sincronizar({ termoauth_id: `tauth-${randomUUID()}`, funcao_id: funcao });
  const response = await request(fn.url)
    .patch(`/funcao/${funcao.toUpperCase()}`)
    .set(auth())
    .send({ nome: `Maiúscula ${randomUUID()}` });
  expect(response.status).toBe(200);
  expect(response.body.id).toBe(funcao);
  expect(await outboxDe(funcao)).toBe(1);
});

test('When PATCH keeps the same name, then nothing is announced', async () => {
  const nome = `Mesma ${randomUUID()}`;
  const funcao = await criarFuncao(nome);
  await sincronizar({ termoauth_id: `tauth-${randomUUID()}`, funcao_id: funcao });
  expect((await request(fn.url).patch(`/funcao/${funcao}`).set(auth()).send({ nome })).status).toBe(200);
  expect((await request(fn.url).patch(`/funcao/${funcao}`).set(auth()).send({})).status).toBe(200);
  expect(await outboxDe(funcao)).toBe(0);
});

test('When the rename loses to a taken name, then 409 and nothing is announced (one transaction)', async () => {
  const ocupado = `Ocupado ${randomUUID()}`;
  await criarFuncao(ocupado);
  const funcao = await criarFuncao();
  await sincronizar({ termoauth_id: `tauth-${randomUUID()}`, funcao_id: funcao });
  const response = await request(fn.url).patch(`/funcao/${funcao}`).set(auth()).send({ nome: ocupado.toUpperCase() });
  expect(response.status).toBe(409);
  expect(await outboxDe(funcao)).toBe(0);
});

test('When a function without collaborators is renamed, then 200 and nothing is announced', async () => {
  const funcao = await criarFuncao();
  const response = await request(fn.url)
    .patch(`/funcao/${funcao}`)
    .set(auth())
    .send({ nome: `Vazia ${randomUUID()}` });
  expect(response.status).toBe(200);
  expect(await outboxDe(funcao)).toBe(0);
});

test('When the function is renamed twice, then each rename announces every collaborator once, with its own name', async () => {
  const funcao = await criarFuncao();
  const pessoas = [`tauth-${randomUUID()}`, `tauth-${randomUUID()}`, `tauth-${randomUUID()}`];
  for (const id of pessoas) await sincronizar({ termoauth_id: id, funcao_id: funcao });
  const nomes = [`Primeiro ${randomUUID()}`, `Segundo ${randomUUID()}`];
  for (const nome of nomes)
    expect((await request(fn.url).patch(`/funcao/${funcao}`).set(auth()).send({ nome })).status).toBe(200);
  await waitFor(() => deFuncao(funcao).length >= 6, { what: 'both rounds of announcements' });
  await tudoEntregue();
  const porNome = (nome: string) =>
    deFuncao(funcao)
      .filter((a) => (a.body.dados as { funcao: { nome: string } }).funcao.nome === nome)
      .map((a) => a.body.entidade_id)
      .sort();
  expect(porNome(nomes[0]!)).toEqual([...pessoas].sort());
  expect(porNome(nomes[1]!)).toEqual([...pessoas].sort());
  expect(deFuncao(funcao)).toHaveLength(6);
});

test('When names hold quotes, backslashes, accents and control characters, then the announcement is still exact JSON', async () => {
  const funcao = await criarFuncao();
  const termoauth = `tauth-${randomUUID()}`;
  const nomePessoa = 'Zé "Aspas" \\ barra\ttab ☃';
  await sincronizar({ termoauth_id: termoauth, funcao_id: funcao, nome: nomePessoa, email: 'zé@empresa.com.br' });
  const nome = `Função "entre aspas" \\ ${randomUUID()} 😀`;
  expect((await request(fn.url).patch(`/funcao/${funcao}`).set(auth()).send({ nome })).status).toBe(200);
  await waitFor(() => deFuncao(funcao).length >= 1, { what: 'the announcement' });
  expect(deFuncao(funcao)[0]!.body).toMatchObject({
    entidade_id: termoauth,
    dados: {
      termoauth_id: termoauth,
      email: 'zé@empresa.com.br',
      nome: nomePessoa,
      ativo: true,
      funcao: { id: funcao, nome },
    },
  });
});

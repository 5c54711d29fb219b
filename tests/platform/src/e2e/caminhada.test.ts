import { createHubClient } from '@hub/client';
import { waitFor } from '@hub/testing';
import { createVerifier } from '@hub/webhook-verifier';
import { api } from '../http-client';
import type { Platform } from '../platform';
import { montarPalco, type Palco } from './palco';
import type { Assinante } from './receptor';

/**
 * The platform walked as its users walk it (issue 10), every service a process, through the
 * gateway only, tokens from identity-dev: the panel's master and a collaborator with a profile,
 * the function registry announcing collaborators, a publishing application and its subscribers,
 * an operator with the error queue, a destination paused and resumed, a reprocessing, the summary.
 * The tests run in order and share what they made.
 */
let palco: Palco;
let platform: Platform;
let assinante: Assinante;
let master: string;
const feito: Record<string, string> = {};

beforeAll(async () => {
  palco = await montarPalco({
    env: {
      'delivery-worker': { DELIVERY_RETRY_DELAYS: '100ms,200ms', DELIVERY_DESTINOS_REFRESH: '200ms' },
      access: { ACCESS_CACHE_TTL: '1s' },
      'hub-api': { ACCESS_CACHE_TTL: '1s' },
      function: { ACCESS_CACHE_TTL: '1s' },
    },
  });
  ({ platform, assinante } = palco);
  master = await platform.userToken('master.caminhada@empresa.com.br', { master: true });
}, 240_000);

afterAll(() => palco?.encerrar(), 60_000);

/** Through the gateway, as a user or an application. */
const gw = <T = Record<string, unknown>>(token: string, method: string, path: string, body?: unknown) =>
  api<T>(platform.gatewayUrl, token, method, path, body);
/** The identity service itself (it is not behind the gateway). */
const identidade = (method: string, path: string, body?: unknown) =>
  api(platform.urls['identity-dev'], undefined, method, path, body);

/** The delivery worker's passes over the destination rows, from its own /metrics (not behind the gateway). */
async function leiturasDoWorker(): Promise<number> {
  const texto = await (await fetch(`${platform.urls['delivery-worker']}/metrics`)).text();
  return Number(/^hub_delivery_destination_reads_total\{[^}]*\} (\d+)/m.exec(texto)?.[1] ?? 0);
}

const verificador = () => createVerifier({ jwksUrl: `${platform.gatewayUrl}/.well-known/jwks.json` });

test('When a master creates a profile and gives it to a collaborator, then the collaborator does what it allows and no more', async () => {
  expect((await gw(master, 'GET', '/auth/acesso')).body).toMatchObject({ master: true });
  const perfil = await gw<{ id: string }>(master, 'POST', '/perfil-de-acesso', {
    nome: 'Monitoramento da caminhada',
    permissoes: { monitoramento: { ler: true } },
  });
  expect(perfil.status).toBe(201);
  await identidade('PUT', '/colaboradores/ta-ana', { email: 'ana@empresa.com.br', nome: 'Ana', ativo: true });
  const acesso = await gw<{ id: string }>(master, 'POST', '/auth', {
    email: 'ana@empresa.com.br',
    perfil: 'colaborador',
  });
  expect(acesso.status).toBe(201);
  // The collaborator is the access seen with the identity service's data, once its sync arrived.
  await waitFor(
    async () => (await gw<{ nome: string }>(master, 'GET', `/colaborador/${acesso.body.id}`)).body.nome === 'Ana',
    { timeoutMs: 20_000, what: "Ana's synchronisation in the access service" },
  );
  const vinculo = await gw(master, 'PATCH', `/colaborador/${acesso.body.id}`, { perfil_de_acesso_id: perfil.body.id });
  expect(vinculo.status).toBe(200);

  const ana = await platform.userToken('ana@empresa.com.br', { nome: 'Ana' });
  expect((await gw(ana, 'GET', '/auth/acesso')).body).toMatchObject({
    master: false,
    permissoes: { monitoramento: { ler: true, criar: false } },
  });
  expect((await gw(ana, 'GET', '/evento')).status).toBe(200);
  expect((await gw(ana, 'GET', '/entrega')).status).toBe(200);
  expect((await gw(ana, 'POST', '/aplicativo', { nome: 'Não pode', client_id: 'nao-pode' })).status).toBe(403);
  expect((await gw(ana, 'GET', '/funcao')).status).toBe(403);
  expect((await gw(ana, 'GET', '/perfil-de-acesso')).status).toBe(403);
});

test('When a function with two collaborators is renamed, then a subscriber of colaborador.atualizado gets one signed delivery per collaborator', async () => {
  const funcao = await gw<{ id: string }>(master, 'POST', '/funcao', { nome: 'Financeiro da caminhada' });
  expect(funcao.status).toBe(201);
  for (const [id, nome] of [
    ['ta-bruno', 'Bruno'],
    ['ta-carla', 'Carla'],
  ] as const)
    await identidade('PUT', `/colaboradores/${id}`, {
      email: `${nome.toLowerCase()}@empresa.com.br`,
      nome,
      funcao_id: funcao.body.id,
      ativo: true,
    });
  await waitFor(
    async () =>
      (await gw<{ quantidade_de_colaboradores: number }>(master, 'GET', `/funcao/${funcao.body.id}`)).body
        .quantidade_de_colaboradores === 2,
    { timeoutMs: 20_000, what: 'the two collaborators in the function' },
  );

  const rh = await gw<{ id: string }>(master, 'POST', '/aplicativo', { nome: 'RH', client_id: 'rh-caminhada' });
  const [tipo] = (await gw<{ id: string }[]>(master, 'GET', '/tipo-de-evento/filtro?nome=colaborador.atualizado')).body;
  const assinatura = await gw(master, 'POST', '/assinatura', {
    aplicativo_assinante_id: rh.body.id,
    tipo_de_evento_id: tipo!.id,
    versao_do_esquema: 1,
    url_de_destino: assinante.url('/rh'),
  });
  expect(assinatura.status).toBe(201);

  expect((await gw(master, 'PATCH', `/funcao/${funcao.body.id}`, { nome: 'Finanças da caminhada' })).status).toBe(200);
  await waitFor(() => assinante.de('/rh').length >= 2, { timeoutMs: 30_000, what: 'two deliveries at /rh' });
  const verifier = verificador();
  const expectedSubscription = (assinatura.body as { id: string }).id;
  const corpos = await Promise.all(
    assinante.de('/rh').map((r) => verifier.verify(r.cabecalhos, r.corpo, { expectedSubscription })),
  );
  expect(corpos).toHaveLength(2);
  const emails = corpos.map((c) => (c as { dados: { email: string } }).dados.email).sort();
  expect(emails).toEqual(['bruno@empresa.com.br', 'carla@empresa.com.br']);
  for (const c of corpos) expect(c).toMatchObject({ tipo: 'colaborador.atualizado', versao_do_esquema: 1 });
});

test('When an application publishes with its own token through @hub/client, then each subscriber gets the event signed, verified against the JWKS', async () => {
  const loja = await gw<{ id: string }>(master, 'POST', '/aplicativo', { nome: 'Loja', client_id: 'loja-caminhada' });
  const erp = await gw<{ id: string }>(master, 'POST', '/aplicativo', { nome: 'ERP', client_id: 'erp-caminhada' });
  const tipo = await gw<{ id: string }>(master, 'POST', '/tipo-de-evento', {
    nome: 'pedido.pago.caminhada',
    aplicativo_id: loja.body.id,
  });
  const versao = await gw(master, 'POST', '/versao-de-esquema', {
    tipo_de_evento_id: tipo.body.id,
    esquema: {
      type: 'object',
      required: ['pedido', 'valor_centavos'],
      properties: { pedido: { type: 'string' }, valor_centavos: { type: 'integer' } },
    },
  });
  expect(versao.status).toBe(201);
  const assinaturas: Record<string, string> = {};
  for (const [caminho, maximo] of [
    ['/ok', 3],
    ['/falha', 2],
  ] as const) {
    const criada = await gw<{ id: string }>(master, 'POST', '/assinatura', {
      aplicativo_assinante_id: erp.body.id,
      tipo_de_evento_id: tipo.body.id,
      versao_do_esquema: 1,
      url_de_destino: assinante.url(caminho),
      maximo_de_tentativas: maximo,
    });
    expect(criada.status).toBe(201);
    assinaturas[caminho] = criada.body.id;
  }
  assinante.responder('/falha', 500);

  const token = await platform.applicationToken('loja-caminhada');
  const cliente = createHubClient({ baseUrl: platform.gatewayUrl, token: () => token });
  const evento = await cliente.publish({
    tipo_de_evento_id: tipo.body.id,
    versao_do_esquema: 1,
    entidade_id: 'pedido-42',
    dados: { pedido: 'pedido-42', valor_centavos: 4990 },
  });
  expect(evento.entregas).toHaveLength(2);
  feito.evento = evento.id;
  feito.falha = evento.entregas.find((e) => e.assinatura_id === assinaturas['/falha'])!.id;

  const [recebida] = await waitFor(() => (assinante.de('/ok').length ? assinante.de('/ok') : undefined), {
    timeoutMs: 20_000,
    what: 'the delivery at /ok',
  });
  const corpo = await verificador().verify(recebida!.cabecalhos, recebida!.corpo, {
    expectedSubscription: assinaturas['/ok']!,
  });
  expect(corpo).toMatchObject({
    id: evento.id,
    tipo: 'pedido.pago.caminhada',
    versao_do_esquema: 1,
    entidade_id: 'pedido-42',
    aplicativo_publicador_id: loja.body.id,
  });
  expect(recebida!.cabecalhos['webhook-id']).toBe(
    evento.entregas.find((e) => e.assinatura_id === assinaturas['/ok'])!.id,
  );
  expect((corpo as { assinatura_id: string }).assinatura_id).toBe(assinaturas['/ok']);
  expect(Object.keys(corpo as object).sort()).toEqual(
    [
      'aplicativo_publicador_id',
      'assinatura_id',
      'dados',
      'entidade_id',
      'id',
      'ocorrido_em',
      'recebido_em',
      'tipo',
      'versao_do_esquema',
    ].sort(),
  );
  expect((corpo as { dados: unknown }).dados).toEqual({ pedido: 'pedido-42', valor_centavos: 4990 });
});

test('When a subscriber keeps failing, then its delivery reaches the error queue, where an operator sees it under /fila and /entrega', async () => {
  const id = feito.falha!;
  await waitFor(
    async () => (await gw<{ situacao: string }>(master, 'GET', `/entrega/${id}`)).body.situacao === 'fila_de_erro',
    { timeoutMs: 30_000, what: 'the failing delivery in fila_de_erro' },
  );
  expect(assinante.de('/falha')).toHaveLength(2);
  const filas = (await gw<{ nome: string; papel: string; mensagens: number }[]>(master, 'GET', '/fila')).body;
  expect(filas.find((f) => f.papel === 'erro')!.mensagens).toBeGreaterThanOrEqual(1);
  const olhar = await gw<{ itens: { entrega_id: string; situacao_da_entrega: string; tentativas: number }[] }>(
    master,
    'GET',
    '/fila/delivery-worker.erro/mensagens?limite=100',
  );
  expect(olhar.body.itens).toContainEqual(
    expect.objectContaining({ entrega_id: id, situacao_da_entrega: 'fila_de_erro', tentativas: 2 }),
  );
  const naFila = (await gw<{ itens: { id: string }[] }>(master, 'GET', '/entrega?situacao=fila_de_erro&tamanho=100'))
    .body.itens;
  expect(naFila.map((e) => e.id)).toContain(id);
});

test('When the operator pauses the destination and reprocesses the delivery, then nothing is attempted until it is resumed, and then it is concluded', async () => {
  const id = feito.falha!;
  const destinos = (await gw<{ itens: { id: string; origem: string }[] }>(master, 'GET', '/destino?tamanho=100')).body
    .itens;
  const destino = destinos.find((d) => d.origem === assinante.origem)!;
  expect(destino).toBeDefined();
  const leituras = await leiturasDoWorker();
  const pausado = await gw<{ pausado: boolean }>(master, 'POST', `/destino/${destino.id}/pausar`);
  expect(pausado.body.pausado).toBe(true);
  // Obeyed within DELIVERY_DESTINOS_REFRESH: two more passes of the worker, the second begun after the pause.
  await waitFor(async () => (await leiturasDoWorker()) >= leituras + 2, { what: 'the worker reading the pause' });
  assinante.responder('/falha', 204);

  const pedido = await gw<{ id: string }>(master, 'POST', '/reprocessamento', { entrega_ids: [id] });
  expect(pedido.status).toBe(202);
  await waitFor(
    async () =>
      (await gw<{ situacao: string }>(master, 'GET', `/reprocessamento/${pedido.body.id}`)).body.situacao ===
      'concluida',
    { timeoutMs: 20_000, what: 'the reprocessing request done' },
  );
  // Paused: the new cycle waits (pendente, no third attempt) while the workers keep obeying the pause.
  await waitFor(
    async () => (await gw<{ situacao: string }>(master, 'GET', `/entrega/${id}`)).body.situacao === 'pendente',
    { what: 'the delivery back in the queue' },
  );
  expect(assinante.de('/falha')).toHaveLength(2);

  const retomado = await gw<{ pausado: boolean }>(master, 'POST', `/destino/${destino.id}/retomar`);
  expect(retomado.body.pausado).toBe(false);
  await waitFor(
    async () => (await gw<{ situacao: string }>(master, 'GET', `/entrega/${id}`)).body.situacao === 'concluida',
    { timeoutMs: 20_000, what: 'the delivery concluded after the resume' },
  );
  expect(assinante.de('/falha')).toHaveLength(3);
  const tentativas = (
    await gw<{ itens: { sucesso: boolean; status_http: number }[] }>(master, 'GET', `/tentativa?entrega_id=${id}`)
  ).body.itens;
  expect(tentativas.map((t) => t.status_http).sort()).toEqual([204, 500, 500]);
});

test('When the walk is over, then the summary shows it all, the error queue agrees with the database and nothing is left in the queue', async () => {
  const resumo = await waitFor(
    async () => {
      const r = (await gw<Record<string, number>>(master, 'GET', '/evento/resumo')).body;
      return (r.entregas_pendentes ?? 1) + (r.entregas_aguardando_nova_tentativa ?? 1) === 0 ? r : undefined;
    },
    { timeoutMs: 20_000, what: 'nothing left in the queue' },
  );
  expect(resumo).toMatchObject({ entregas_na_fila_de_erro: 0 });
  // The two colaborador.atualizado events and the application's one.
  expect(resumo.eventos_nas_ultimas_24_horas).toBeGreaterThanOrEqual(3);
  expect(resumo.tentativas_com_falha_nas_ultimas_24_horas).toBeGreaterThanOrEqual(2);
  expect(resumo.entregues_nas_ultimas_24_horas).toBeGreaterThanOrEqual(4);
  const conciliacao = await gw<Record<string, number>>(master, 'POST', '/fila/erro/conciliar');
  expect(conciliacao.body).toMatchObject({ mensagens_mantidas: 0, entregas_republicadas: 0 });
  const erro = await gw<{ mensagens: number }>(master, 'GET', '/fila/delivery-worker.erro');
  expect(erro.body.mensagens).toBe(0);
  const detalhe = await gw<{ entregas_concluidas: number; entregas: unknown[] }>(
    master,
    'GET',
    `/evento/${feito.evento}`,
  );
  expect(detalhe.body).toMatchObject({ entregas_concluidas: 2 });
});

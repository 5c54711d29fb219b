import { createHubClient, HubError } from '@hub/client';
import { waitFor } from '@hub/testing';
import { createVerifier } from '@hub/webhook-verifier';
import { api } from '../http-client';
import { montarPalco, type Palco } from './palco';

/**
 * Replays through the whole platform (gateway, hub-api, relay, worker): a replayed event reaches its
 * subscriber as if published now, with the body publication made and the hub's signature; a
 * cloudevents subscription receives it as a CloudEvent; the subscribing application replays its own
 * subscription with @hub/client's reproduzirAssinatura and follows it with listReproducoes, and another
 * application's is 404 to it.
 */
let palco: Palco;
beforeAll(async () => {
  palco = await montarPalco({ env: { 'delivery-worker': { DELIVERY_RETRY_DELAYS: '100ms,200ms' } } });
}, 240_000);
afterAll(() => palco?.encerrar(), 60_000);

test('When a published event is replayed to two newer subscriptions, one of them by its application through @hub/client, then each receives it signed, the same body with its own assinatura_id, one as a CloudEvent', async () => {
  const { platform, assinante } = palco;
  const master = await platform.userToken('master.reproducao@empresa.com.br', { master: true });
  const gw = async <T = { id: string }>(method: string, path: string, body?: unknown) => {
    const r = await api<T>(platform.gatewayUrl, master, method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const loja = await gw('POST', '/aplicativo', { nome: 'Loja reproducao', client_id: 'loja-reproducao' });
  const erp = await gw('POST', '/aplicativo', { nome: 'ERP reproducao', client_id: 'erp-reproducao' });
  const outro = await gw('POST', '/aplicativo', { nome: 'Outro reproducao', client_id: 'outro-reproducao' });
  const tipo = await gw('POST', '/tipo-de-evento', { nome: 'pedido.reproducao', aplicativo_id: loja.id });
  await gw('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.id, esquema: { type: 'object' } });
  const assinar = (caminho: string, extra: object = {}, dono = erp.id) =>
    gw('POST', '/assinatura', {
      aplicativo_assinante_id: dono,
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      url_de_destino: assinante.url(caminho),
      ...extra,
    });
  const viva = await assinar('/viva');
  const publicador = createHubClient({
    baseUrl: platform.gatewayUrl,
    token: async () => platform.applicationToken('loja-reproducao'),
  });
  const evento = await publicador.publish({
    tipo_de_evento_id: tipo.id,
    versao_do_esquema: 1,
    entidade_id: 'pedido-1',
    dados: { total: 4990, itens: [{ sku: 'CANECA' }] },
  });
  const [original] = await waitFor(() => (assinante.de('/viva').length ? assinante.de('/viva') : undefined), {
    what: 'the live delivery',
  });

  const nova = await assinar('/nova');
  const nuvem = await assinar('/nuvem', { formato: 'cloudevents' });
  const alheia = await assinar('/alheia', {}, outro.id);
  const faixa = { desde: evento.recebido_em, ate: evento.recebido_em };
  const assinanteCliente = createHubClient({
    baseUrl: platform.gatewayUrl,
    token: async () => platform.applicationToken('erp-reproducao'),
  });
  const pela = await assinanteCliente.reproduzirAssinatura(nova.id, faixa);
  expect(pela).toMatchObject({ assinatura_id: nova.id, situacao: 'pendente', quantidade_de_eventos: 1 });
  expect(pela.solicitada_por).toBe('erp-reproducao');
  await expect(assinanteCliente.reproduzirAssinatura(alheia.id, faixa)).rejects.toMatchObject({
    status: 404,
    codigo: 'nao_encontrado',
  });
  await expect(assinanteCliente.reproduzirAssinatura(alheia.id, faixa)).rejects.toBeInstanceOf(HubError);
  await gw('POST', `/assinatura/${nuvem.id}/reproduzir`, faixa);

  const chegou = (caminho: string) =>
    waitFor(() => assinante.de(caminho)[0], { timeoutMs: 30_000, what: `the replayed delivery at ${caminho}` });
  const [padrao, ce] = [await chegou('/nova'), await chegou('/nuvem')];
  // The application follows its replay to the end.
  await waitFor(async () => {
    const { itens } = await assinanteCliente.listReproducoes(nova.id);
    return itens.find((r) => r.id === pela.id)?.situacao === 'concluida';
  });
  await expect(assinanteCliente.listReproducoes(alheia.id)).rejects.toMatchObject({ status: 404 });
  const verificador = createVerifier({ jwksUrl: `${platform.gatewayUrl}/.well-known/jwks.json` });
  await verificador.verify(padrao.cabecalhos, padrao.corpo, { expectedSubscription: nova.id });
  expect(padrao.corpo.toString('utf8')).toBe(
    original!.corpo.toString('utf8').replace(`"assinatura_id":"${viva.id}"`, `"assinatura_id":"${nova.id}"`),
  );
  const [entregaNova] = (await gw<{ itens: { id: string }[] }>('GET', `/entrega?assinatura_id=${nova.id}`)).itens;
  expect(padrao.cabecalhos['webhook-id']).toBe(entregaNova!.id);
  expect(padrao.cabecalhos['webhook-id']).not.toBe(original!.cabecalhos['webhook-id']);

  expect(ce.cabecalhos['content-type']).toBe('application/cloudevents+json');
  const nuvemVerificada = (await verificador.verify(ce.cabecalhos, ce.corpo, { expectedSubscription: nuvem.id })) as {
    specversion: string;
    id: string;
    subject: string;
  };
  expect(nuvemVerificada).toMatchObject({ specversion: '1.0', id: evento.id, subject: 'pedido-1' });
  expect(ce.corpo.toString('utf8')).toContain('"data":{"total":4990,"itens":[{"sku":"CANECA"}]}');
}, 120_000);

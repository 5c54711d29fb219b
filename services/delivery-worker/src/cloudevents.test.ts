import { waitFor } from '@hub/testing';
import { createVerifier, type EntregaCloudEvents } from '@hub/webhook-verifier';
import { CloudEvent, HTTP } from 'cloudevents';
import {
  cenario,
  createTestHub,
  deleteTestTopology,
  startDeliveryWorkerForTests,
  type TestDeliveryWorker,
  type TestHub,
} from './delivery-worker.test-support';
import { iniciarReceptor, type Receptor } from './receptor.test-support';

/**
 * A subscription with formato cloudevents, through the real worker: the POST a receiver gets is
 * read by the CloudEvents SDK for JavaScript (HTTP.toEvent, structured mode) and verified by
 * @hub/webhook-verifier, as a subscriber would.
 */
const BASE = 'https://hub.example/api';

let hub: TestHub;
let worker: TestDeliveryWorker;
let receptor: Receptor;
let c: Awaited<ReturnType<typeof cenario>>;

beforeAll(async () => {
  hub = await createTestHub();
  receptor = await iniciarReceptor({
    '/.well-known/jwks.json': (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(hub.jwks)),
    '/ce': (_req, res) => res.writeHead(200).end(),
    '/ce-sem-ordem': (_req, res) => res.writeHead(200).end(),
    '/padrao': (_req, res) => res.writeHead(200).end(),
  });
  worker = await startDeliveryWorkerForTests(hub, { DELIVERY_SCHEMA_BASE_URL: BASE });
  c = await cenario(hub);
});
afterAll(async () => {
  await worker?.close();
  if (worker) await deleteTestTopology(hub);
  await receptor?.fechar();
  await hub?.close();
});

const concluida = (id: string) =>
  waitFor(async () => (await hub.db.entrega.findUniqueOrThrow({ where: { id } })).situacao === 'concluida', {
    timeoutMs: 15_000,
    what: `${id} concluida`,
  });
const pedidoDe = (caminho: string, entregaId: string) =>
  receptor.de(caminho).find((r) => r.cabecalhos['webhook-id'] === entregaId)!;

test('When a subscription is cloudevents, then the SDK reads the POST as a valid CloudEvent with the event attributes, and the verifier accepts its signature', async () => {
  const assinatura = await c.assinar(receptor.url('/ce'), 3, { ordenada: true, formato: 'cloudevents' });
  const [trabalho] = await c.entregar([assinatura], { broker: worker.broker, entidade: 'pedido-42' });
  await concluida(trabalho!.entrega_id);
  const pedido = pedidoDe('/ce', trabalho!.entrega_id);
  expect(pedido.cabecalhos['content-type']).toBe('application/cloudevents+json');

  const evento = HTTP.toEvent({ headers: pedido.cabecalhos, body: pedido.corpo }) as CloudEvent<unknown>;
  expect(evento).toBeInstanceOf(CloudEvent);
  expect(evento.validate()).toBe(true);
  const padrao = JSON.parse(trabalho!.corpo) as Record<string, unknown>;
  expect({
    specversion: evento.specversion,
    id: evento.id,
    source: evento.source,
    type: evento.type,
    subject: evento.subject,
    time: evento.time,
    dataschema: evento.dataschema,
    datacontenttype: evento.datacontenttype,
    assinaturaid: evento.assinaturaid,
    sequence: evento.sequence,
  }).toEqual({
    specversion: '1.0',
    id: padrao.id,
    source: `/aplicativos/${c.ids.publicador}`,
    type: c.nomeDoTipo,
    subject: 'pedido-42',
    time: padrao.ocorrido_em,
    dataschema: `${BASE}/esquema/${c.nomeDoTipo}/1`,
    datacontenttype: 'application/json',
    assinaturaid: assinatura.id,
    sequence: '1',
  });
  expect(evento.data).toEqual(padrao.dados);
  // dados as the publisher wrote them: the 20-digit integer keeps every digit in the body.
  expect(pedido.corpo).toContain('"data":{"valor": 12345678901234567890, "nome": "Ação"}}');

  const verificador = createVerifier({
    jwksUrl: receptor.url('/.well-known/jwks.json'),
    expectedSubscription: assinatura.id,
  });
  const verificado = await verificador.verify<EntregaCloudEvents>(pedido.cabecalhos, pedido.corpo);
  expect(verificado).toMatchObject({ specversion: '1.0', assinaturaid: assinatura.id, subject: 'pedido-42' });
  await expect(
    createVerifier({ jwksUrl: receptor.url('/.well-known/jwks.json'), expectedSubscription: c.ids.assinante }).verify(
      pedido.cabecalhos,
      pedido.corpo,
    ),
  ).rejects.toMatchObject({ code: 'subscription_mismatch' });
});

test('When one event goes to a standard and a cloudevents subscription, then each gets its own shape; an unordered CloudEvent has no sequence', async () => {
  const padrao = await c.assinar(receptor.url('/padrao'));
  const nuvem = await c.assinar(receptor.url('/ce-sem-ordem'), 3, { formato: 'cloudevents' });
  const [paraPadrao, paraNuvem] = await c.entregar([padrao, nuvem], { broker: worker.broker });
  await Promise.all([concluida(paraPadrao!.entrega_id), concluida(paraNuvem!.entrega_id)]);

  const simples = pedidoDe('/padrao', paraPadrao!.entrega_id);
  expect(simples.cabecalhos['content-type']).toBe('application/json');
  expect(simples.corpo).toBe(paraPadrao!.corpo);

  const pedido = pedidoDe('/ce-sem-ordem', paraNuvem!.entrega_id);
  const evento = HTTP.toEvent({ headers: pedido.cabecalhos, body: pedido.corpo }) as CloudEvent<unknown>;
  expect(evento.validate()).toBe(true);
  expect(evento.sequence).toBeUndefined();
  expect(evento.assinaturaid).toBe(nuvem.id);
});

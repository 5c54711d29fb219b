import { createPublicKey, verify } from 'node:crypto';
import type { ConsumeMessage } from '@hub/broker';
import { ERROR_QUEUE_HEADERS } from '@hub/contracts';
import { baldeDaLatencia } from '@hub/hub-data';
import { waitFor } from '@hub/testing';
import { createVerifier } from '@hub/webhook-verifier';
import { MAX_RESPOSTA } from './features/entregas/remetente';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import {
  cenario,
  createTestHub,
  deleteTestTopology,
  startDeliveryWorkerForTests,
  type TestDeliveryWorker,
  type TestHub,
} from './delivery-worker.test-support';

const PASSOS = '20ms,40ms,1500ms';

let hub: TestHub;
let worker: TestDeliveryWorker;
let receptor: Receptor;
let c: Awaited<ReturnType<typeof cenario>>;
const erros: ConsumeMessage[] = [];

beforeAll(async () => {
  hub = await createTestHub();
  receptor = await iniciarReceptor({
    '/.well-known/jwks.json': (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(hub.jwks)),
    '/ok': (_req, res) => res.writeHead(200).end('recebido'),
    '/erro': (_req, res) => res.writeHead(500).end('falhou'),
    '/gone': (_req, res) => res.writeHead(410).end(),
    '/ocupado': (_req, res) => res.writeHead(429, { 'retry-after': '1' }).end(),
    '/redirecionar': (_req, res) => res.writeHead(302, { location: '/ok' }).end(),
    '/mudo': () => undefined,
    '/sem-fim': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const pedaco = Buffer.alloc(16 * 1024, 'a');
      const escrever = () => {
        while (!res.destroyed && res.write(pedaco));
        if (!res.destroyed) res.once('drain', escrever);
      };
      escrever();
    },
  });
  worker = await startDeliveryWorkerForTests(hub, { DELIVERY_RETRY_DELAYS: PASSOS, DELIVERY_TIMEOUT: '1s' });
  c = await cenario(hub);
});
afterAll(async () => {
  await worker?.close();
  if (worker) await deleteTestTopology(hub);
  await receptor?.fechar();
  await hub?.close();
});

const entrega = (id: string) => hub.db.entrega.findUniqueOrThrow({ where: { id } });
const tentativas = (entregaId: string) =>
  hub.db.tentativa.findMany({ where: { entregaId }, orderBy: { numero: 'asc' } });
const ate = (id: string, situacao: string) =>
  waitFor(async () => (await entrega(id)).situacao === situacao, { timeoutMs: 15_000, what: `${id} ${situacao}` });

/** A counter of /metrics (0 when not yet there). */
async function metrica(padrao: RegExp): Promise<number> {
  const texto = await (await fetch(`${worker.url}/metrics`)).text();
  return Number(padrao.exec(texto)?.[1] ?? 0);
}

/** Moves every message of the error queue into `erros` and gives those of one delivery. */
async function naFilaDeErro(entregaId: string): Promise<ConsumeMessage[]> {
  await worker.broker.withChannel(async (ch) => {
    for (;;) {
      const m = await ch.get(hub.topologia.filaDeErro, { noAck: true });
      if (!m) break;
      erros.push(m as unknown as ConsumeMessage);
    }
  });
  return erros.filter((m) => m.properties.messageId === entregaId);
}

describe('delivery worker: one attempt', () => {
  it("When a delivery captured at subscriber A is replayed into subscriber B within the window, then B's verifier (expectedSubscription) refuses it as subscription_mismatch while A's accepts it", async () => {
    const [a, b] = [await c.assinar(`${receptor.url('/ok')}?a`), await c.assinar(`${receptor.url('/ok')}?b`)];
    const trabalhos = await c.entregar([a, b], { broker: worker.broker });
    for (const t of trabalhos) await ate(t.entrega_id, 'concluida');
    const deA = trabalhos.find((t) => t.assinatura_id === a.id)!;
    const [capturada] = receptor.de('/ok').filter((r) => r.cabecalhos['webhook-id'] === deA.entrega_id);
    const jwksUrl = receptor.url('/.well-known/jwks.json');
    const verificadorDeA = createVerifier({ jwksUrl, expectedSubscription: a.id });
    const verificadorDeB = createVerifier({ jwksUrl, expectedSubscription: b.id });

    await expect(verificadorDeA.verify(capturada!.cabecalhos, capturada!.corpo)).resolves.toMatchObject({
      assinatura_id: a.id,
    });
    await expect(verificadorDeB.verify(capturada!.cabecalhos, capturada!.corpo)).rejects.toMatchObject({
      code: 'subscription_mismatch',
      message: expect.stringContaining(a.id),
    });
    // With the check switched off on purpose the signature alone verifies: the body is what binds it to A.
    await expect(
      createVerifier({ jwksUrl, acceptAnySubscription: true }).verify(capturada!.cabecalhos, capturada!.corpo),
    ).resolves.toBeDefined();
  });

  it('When a job arrives, then the body is POSTed verbatim, signed (verified by the package and by node:crypto from the JWKS), and the delivery is concluida with its attempt and tally', async () => {
    const assinatura = await c.assinar(receptor.url('/ok'));
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    await ate(trabalho!.entrega_id, 'concluida');

    const [pedido] = receptor.de('/ok').filter((r) => r.cabecalhos['webhook-id'] === trabalho!.entrega_id);
    expect(pedido!.corpo).toBe(trabalho!.corpo);
    expect(pedido!.corpo).toContain('"valor": 12345678901234567890');
    expect(pedido!.cabecalhos['content-type']).toBe('application/json');

    const verificador = createVerifier({
      jwksUrl: receptor.url('/.well-known/jwks.json'),
      expectedSubscription: assinatura.id,
    });
    const verificado = await verificador.verifyDelivery(pedido!.cabecalhos, pedido!.corpo);
    expect(verificado.payload).toMatchObject({
      id: trabalho!.evento_id,
      tipo: c.nomeDoTipo,
      assinatura_id: assinatura.id,
    });

    const [jwk] = hub.jwks.keys;
    expect(pedido!.cabecalhos['webhook-key-id']).toBe(jwk!.kid);
    const assinaturaV1a = String(pedido!.cabecalhos['webhook-signature']).split(' ')[0]!;
    expect(assinaturaV1a.startsWith('v1a,')).toBe(true);
    const conteudo = Buffer.from(`${trabalho!.entrega_id}.${pedido!.cabecalhos['webhook-timestamp']}.${pedido!.corpo}`);
    const chave = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk!.x }, format: 'jwk' });
    expect(verify(null, conteudo, chave, Buffer.from(assinaturaV1a.slice(4), 'base64'))).toBe(true);
    expect(
      verify(null, Buffer.from(`${conteudo.toString()} `), chave, Buffer.from(assinaturaV1a.slice(4), 'base64')),
    ).toBe(false);

    const linha = await entrega(trabalho!.entrega_id);
    expect(linha).toMatchObject({ quantidadeDeTentativas: 1, tentativasNoCicloAtual: 1, ultimoErro: null });
    expect(linha.entregueEm).not.toBeNull();
    const [t] = await tentativas(trabalho!.entrega_id);
    expect(t).toMatchObject({ numero: 1, statusHttp: 200, sucesso: true, resposta: 'recebido', erro: null });
    expect(t!.cabecalhos).toMatchObject({ 'webhook-id': trabalho!.entrega_id, 'webhook-key-id': jwk!.kid });
    expect(JSON.stringify(t!.cabecalhos)).not.toContain('"d"');
    const [resumo] = await hub.db.$queryRaw<{ concluidas: number }[]>`
      select coalesce(sum(entregas_concluidas), 0)::int as concluidas from resumo_por_hora`;
    expect(resumo!.concluidas).toBeGreaterThanOrEqual(1);
    // its latency (acceptance to conclusion) in its bucket of the hour's histogram, written by the same
    // statement as the tally: the histogram holds exactly the concluded deliveries
    const latencia = linha.entregueEm!.getTime() - linha.eventoRecebidoEm.getTime();
    const [histograma] = await hub.db.$queryRaw<{ total: number; no_balde: number }[]>`
      select coalesce(sum(entregas), 0)::int as total,
             coalesce(sum(entregas) filter (where balde = ${baldeDaLatencia(latencia)}), 0)::int as no_balde
        from resumo_latencia_por_hora`;
    const [concluidas] = await hub.db.$queryRaw<{ n: number }[]>`
      select coalesce(sum(entregas_concluidas), 0)::int as n from resumo_por_hora`;
    expect(histograma!.no_balde).toBeGreaterThanOrEqual(1);
    expect(histograma!.total).toBe(concluidas!.n);

    const metricas = await (await fetch(`${worker.url}/metrics`)).text();
    expect(metricas).toMatch(/hub_delivery_attempts_total\{resultado="sucesso"[^}]*\} [1-9]/);
    const prontidao = await fetch(`${worker.url}/saude/prontidao`);
    expect(prontidao.status).toBe(200);
    expect(await prontidao.json()).toMatchObject({ dependencias: { postgresql: 'ok', rabbitmq: 'ok', chaves: 'ok' } });
  });

  it('When the receiver answers 500, then exactly maximo_de_tentativas attempts are made with the same webhook-id, then fila_de_erro and one message in the error queue', async () => {
    const assinatura = await c.assinar(receptor.url('/erro'), 3);
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    const id = trabalho!.entrega_id;
    await ate(id, 'fila_de_erro');
    const lista = await tentativas(id);
    expect(lista.map((t) => [t.numero, t.statusHttp, t.sucesso])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 500, false],
    ]);
    expect(lista[0]!.resposta).toBe('falhou');
    const pedidos = receptor.de('/erro').filter((r) => r.cabecalhos['webhook-id'] === id);
    expect(pedidos).toHaveLength(3);
    expect(await entrega(id)).toMatchObject({
      quantidadeDeTentativas: 3,
      tentativasNoCicloAtual: 3,
      ultimoErro: 'HTTP 500',
    });
    const mensagens = await waitFor(async () => {
      const m = await naFilaDeErro(id);
      return m.length > 0 ? m : undefined;
    });
    expect(mensagens).toHaveLength(1);
    expect(mensagens[0]!.properties.headers).toMatchObject({
      [ERROR_QUEUE_HEADERS.tentativas]: 3,
      [ERROR_QUEUE_HEADERS.motivo]: 'tentativas_esgotadas',
      [ERROR_QUEUE_HEADERS.ultimoErro]: 'HTTP 500',
    });
    expect(JSON.parse(mensagens[0]!.content.toString())).toEqual(trabalho);
    const [resumo] = await hub.db.$queryRaw<{ falhas: number }[]>`
      select coalesce(sum(tentativas_com_falha), 0)::int as falhas from resumo_por_hora`;
    expect(resumo!.falhas).toBeGreaterThanOrEqual(3);
  });

  it('When the receiver answers 410 Gone, then the subscription is switched off and the delivery goes to the error queue at once', async () => {
    const assinatura = await c.assinar(receptor.url('/gone'), 5);
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    await ate(trabalho!.entrega_id, 'fila_de_erro');
    expect(await tentativas(trabalho!.entrega_id)).toHaveLength(1);
    expect((await hub.db.assinatura.findUniqueOrThrow({ where: { id: assinatura.id } })).ativa).toBe(false);
    const mensagens = await waitFor(async () => {
      const m = await naFilaDeErro(trabalho!.entrega_id);
      return m.length > 0 ? m : undefined;
    });
    expect(mensagens[0]!.properties.headers).toMatchObject({ [ERROR_QUEUE_HEADERS.motivo]: 'assinatura_encerrada' });

    // A later delivery to the switched-off subscription is cancelled, not sent.
    const [outro] = await c.entregar([assinatura], { broker: worker.broker });
    await ate(outro!.entrega_id, 'cancelada');
    expect(await tentativas(outro!.entrega_id)).toHaveLength(0);
  });

  it('When the receiver answers 429 with Retry-After: 1, then the next attempt waits at least that long', async () => {
    const assinatura = await c.assinar(receptor.url('/ocupado'), 2);
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    await ate(trabalho!.entrega_id, 'fila_de_erro');
    const [primeira, segunda] = await tentativas(trabalho!.entrega_id);
    expect(primeira!.statusHttp).toBe(429);
    // The first failure's own step is 20 ms; Retry-After raised it to a second.
    const espera = segunda!.iniciadaEm.getTime() - primeira!.iniciadaEm.getTime();
    expect(espera).toBeGreaterThanOrEqual(1000);
  });

  it('When the receiver redirects, then the attempt is a failure and the redirect is not followed', async () => {
    const assinatura = await c.assinar(receptor.url('/redirecionar'), 1);
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    await ate(trabalho!.entrega_id, 'fila_de_erro');
    const [t] = await tentativas(trabalho!.entrega_id);
    expect(t).toMatchObject({ statusHttp: 302, sucesso: false });
    expect(t!.erro).toMatch(/redirect .*not followed/);
    expect(receptor.de('/ok').filter((r) => r.cabecalhos['webhook-id'] === trabalho!.entrega_id)).toHaveLength(0);
  });

  it('When the receiver never answers, then the attempt fails on the timeout with no status', async () => {
    const assinatura = await c.assinar(receptor.url('/mudo'), 1);
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    await ate(trabalho!.entrega_id, 'fila_de_erro');
    const [t] = await tentativas(trabalho!.entrega_id);
    expect(t).toMatchObject({ statusHttp: null, sucesso: false, resposta: null });
    expect(t!.erro).toMatch(/^timeout/);
  });

  it('When the receiver streams an endless answer, then reading stops at 64 KiB and the connection is dropped', async () => {
    const assinatura = await c.assinar(receptor.url('/sem-fim'), 1);
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    await ate(trabalho!.entrega_id, 'concluida');
    const [t] = await tentativas(trabalho!.entrega_id);
    expect(t!.statusHttp).toBe(200);
    expect(t!.resposta).toHaveLength(MAX_RESPOSTA);
    await waitFor(() => receptor.abertos() === 0, { what: 'the endless answer closed by the worker' });
  });

  it('When a concluded delivery is delivered again, then no second attempt is made and its state stays', async () => {
    const assinatura = await c.assinar(`${receptor.url('/ok')}?de-novo`);
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    await ate(trabalho!.entrega_id, 'concluida');
    const antes = await entrega(trabalho!.entrega_id);
    const descartados = await metrica(/hub_delivery_jobs_total\{desfecho="descartado"[^}]*\} (\d+)/);
    await c.republicar(trabalho!, worker.broker);
    await waitFor(
      async () => (await metrica(/hub_delivery_jobs_total\{desfecho="descartado"[^}]*\} (\d+)/)) > descartados,
    );
    expect(await tentativas(trabalho!.entrega_id)).toHaveLength(1);
    expect(receptor.de('/ok').filter((r) => r.cabecalhos['webhook-id'] === trabalho!.entrega_id)).toHaveLength(1);
    expect(await entrega(trabalho!.entrega_id)).toEqual(antes);
  });
});

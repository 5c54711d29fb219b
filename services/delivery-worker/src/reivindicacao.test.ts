import type http from 'node:http';
import { publishMessage } from '@hub/broker';
import { ERROR_QUEUE_HEADERS, isolatedDeliveryTopology, trabalhoDeEntrega } from '@hub/contracts';
import { connectTestBroker, uniqueName, waitFor } from '@hub/testing';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import {
  cenario,
  createTestHub,
  deleteTestTopology,
  startDeliveryWorkerForTests,
  type TestDeliveryWorker,
  type TestHub,
} from './delivery-worker.test-support';

/**
 * The claim of a delivery (issue 18): one job attempts a delivery at a time, each attempt goes to
 * the subscription's URL as it is then, and a job the worker cannot read goes to the error queue
 * once. Real workers, a real receiver, real PostgreSQL and RabbitMQ.
 */

/** A worker's jobs counted by outcome, as its /metrics says. */
async function desfechos(worker: TestDeliveryWorker): Promise<Record<string, number>> {
  const texto = await (await fetch(`${worker.url}/metrics`)).text();
  return Object.fromEntries(
    [...texto.matchAll(/^hub_delivery_jobs_total\{desfecho="(\w+)"[^}]*\} (\d+)/gm)].map(([, d, n]) => [d, Number(n)]),
  );
}

describe('delivery worker: the claim', () => {
  let hub: TestHub;
  let receptor: Receptor;
  const presos: http.ServerResponse[] = [];
  /** Requests open now and the most ever open at once, per webhook-id. */
  const abertos = new Map<string, number>();
  const maximo = new Map<string, number>();
  const workers: TestDeliveryWorker[] = [];

  beforeAll(async () => {
    hub = await createTestHub();
    receptor = await iniciarReceptor({
      '/segurar': (req, res) => {
        const id = String(req.headers['webhook-id']);
        abertos.set(id, (abertos.get(id) ?? 0) + 1);
        maximo.set(id, Math.max(maximo.get(id) ?? 0, abertos.get(id)!));
        res.on('close', () => abertos.set(id, abertos.get(id)! - 1));
        presos.push(res);
      },
      '/falhar': (_req, res) => res.writeHead(500).end(),
      '/nova': (_req, res) => res.writeHead(200).end(),
      '/ok': (_req, res) => res.writeHead(200).end(),
    });
  });
  afterAll(async () => {
    for (const w of workers) await w.close();
    if (workers[0]) await deleteTestTopology(hub);
    await receptor?.fechar();
    await hub?.close();
  });

  it('When a copy of a job reaches a second worker while the first still POSTs it, then the second does not POST it: one request at a time for the webhook-id, one attempt', async () => {
    // A lease far longer than the test: the copy comes while the first claim is alive.
    const env = { DELIVERY_TIMEOUT: '20s' };
    const um = await startDeliveryWorkerForTests(hub, env);
    workers.push(um);
    // The second worker takes its jobs from a queue of its own, so the copy surely reaches it (as a
    // redelivery reaches another worker after the first one's channel died).
    const outra = { ...hub, topologia: isolatedDeliveryTopology(uniqueName('outro')) };
    const dois = await startDeliveryWorkerForTests(outra, env);
    try {
      const c = await cenario(hub);
      const assinatura = await c.assinar(receptor.url('/segurar'), 3);
      const [trabalho] = await c.entregar([assinatura], { broker: um.broker });
      await waitFor(() => receptor.de('/segurar').length === 1, { what: "the first worker's POST under way" });

      await publishMessage(dois.broker, { ...trabalhoDeEntrega, exchange: outra.topologia.entregas }, trabalho!, {
        messageId: trabalho!.entrega_id,
        mandatory: true,
      });
      await waitFor(async () => receptor.de('/segurar').length > 1 || (await desfechos(dois)).descartado === 1, {
        what: 'the second worker done with the copy',
      });
      expect(receptor.de('/segurar')).toHaveLength(1);
      expect(maximo.get(trabalho!.entrega_id)).toBe(1);

      for (const res of presos.splice(0)) res.writeHead(200).end();
      await waitFor(
        async () =>
          (await hub.db.entrega.findUniqueOrThrow({ where: { id: trabalho!.entrega_id } })).situacao === 'concluida',
      );
      expect(await hub.db.tentativa.count({ where: { entregaId: trabalho!.entrega_id } })).toBe(1);
    } finally {
      for (const res of presos.splice(0)) res.destroy();
      await dois.close();
      await deleteTestTopology(outra);
    }
  });

  it("When the subscription's url_de_destino changed after its job was written (a PATCH while it waited), then the attempt goes to the new URL and the delivery says so", async () => {
    const worker = workers[0] ?? (await startDeliveryWorkerForTests(hub));
    if (!workers.includes(worker)) workers.push(worker);
    const c = await cenario(hub);
    const assinatura = await c.assinar(receptor.url('/falhar'), 3);
    const [trabalho] = await c.entregar([assinatura], { publicar: false });
    const id = trabalho!.entrega_id;
    // What hub-api's PATCH /assinatura/{id} writes; the job in the queue still names the old URL.
    const nova = receptor.url('/nova');
    await hub.db.assinatura.update({ where: { id: assinatura.id }, data: { urlDeDestino: nova } });
    await c.republicar(trabalho!, worker.broker);

    await waitFor(async () => (await hub.db.entrega.findUniqueOrThrow({ where: { id } })).situacao === 'concluida');
    const entrega = await hub.db.entrega.findUniqueOrThrow({ where: { id } });
    expect(entrega).toMatchObject({ urlDeDestino: nova, quantidadeDeTentativas: 1 });
    expect(receptor.de('/nova').filter((r) => r.cabecalhos['webhook-id'] === id)).toHaveLength(1);
    expect(receptor.de('/falhar').filter((r) => r.cabecalhos['webhook-id'] === id)).toHaveLength(0);
  });

  it('When a job cannot be read, then its delivery goes to fila_de_erro and its job, rebuilt, to the error queue once, and the sweeper never sends it again', async () => {
    const worker = workers[0] ?? (await startDeliveryWorkerForTests(hub));
    if (!workers.includes(worker)) workers.push(worker);
    const c = await cenario(hub);
    const assinatura = await c.assinar(receptor.url('/ok'), 3);
    const [trabalho] = await c.entregar([assinatura], { publicar: false });
    const id = trabalho!.entrega_id;
    await worker.broker.publish(hub.topologia.entregas, trabalhoDeEntrega.routingKey, Buffer.from('{"quebrado'), {
      messageId: id,
      mandatory: true,
    });

    await waitFor(async () => (await hub.db.entrega.findUniqueOrThrow({ where: { id } })).situacao === 'fila_de_erro', {
      what: 'the delivery in fila_de_erro',
    });
    const entrega = await hub.db.entrega.findUniqueOrThrow({ where: { id } });
    expect(entrega.ultimoErro).toMatch(/^poison job: its message could not be read/);
    expect(entrega.quantidadeDeTentativas).toBe(0);

    const broker = await connectTestBroker('reivindicacao-erro');
    try {
      const mensagens = await broker.withChannel(async (ch) => {
        const lidas = [];
        for (let m = await ch.get(hub.topologia.filaDeErro); m; m = await ch.get(hub.topologia.filaDeErro)) {
          lidas.push(m);
          ch.ack(m);
        }
        return lidas;
      });
      expect(mensagens).toHaveLength(1);
      expect(mensagens[0]!.properties.headers?.[ERROR_QUEUE_HEADERS.motivo]).toBe('limite_de_entregas');
      expect(JSON.parse(mensagens[0]!.content.toString())).toMatchObject({ entrega_id: id, corpo: trabalho!.corpo });
    } finally {
      await broker.close();
    }
    // However old it gets, the sweeper leaves a delivery in fila_de_erro alone.
    await hub.db.entrega.update({
      where: { id },
      data: { proximaTentativaEm: new Date(0), atualizadaEm: new Date(0) },
    });
    expect(await worker.varredura.runNow()).toBe(0);
    expect(receptor.de('/ok').filter((r) => r.cabecalhos['webhook-id'] === id)).toHaveLength(0);
  });

  it('When the subscription is deleted while its last attempt is under way and that attempt fails, then the delivery is cancelada and nothing reaches the error queue', async () => {
    const worker = workers[0] ?? (await startDeliveryWorkerForTests(hub));
    if (!workers.includes(worker)) workers.push(worker);
    const c = await cenario(hub);
    const assinatura = await c.assinar(receptor.url('/segurar'), 1);
    const [trabalho] = await c.entregar([assinatura], { broker: worker.broker });
    const id = trabalho!.entrega_id;
    await waitFor(() => presos.length === 1, { what: 'the last attempt under way' });
    // What hub-api's DELETE /assinatura/{id} writes; the delivery em_andamento is left to its worker.
    await hub.db.assinatura.update({ where: { id: assinatura.id }, data: { excluidaEm: new Date(), ativa: false } });
    for (const res of presos.splice(0)) res.writeHead(500).end();

    await waitFor(async () => (await hub.db.entrega.findUniqueOrThrow({ where: { id } })).situacao === 'cancelada', {
      what: 'the delivery cancelada',
    });
    expect(await hub.db.tentativa.count({ where: { entregaId: id } })).toBe(1);
    const broker = await connectTestBroker('reivindicacao-excluida');
    try {
      const ids = await broker.withChannel(async (ch) => {
        const lidos: string[] = [];
        for (let m = await ch.get(hub.topologia.filaDeErro); m; m = await ch.get(hub.topologia.filaDeErro)) {
          lidos.push(String(m.properties.messageId));
          ch.nack(m, false, true);
        }
        return lidos;
      });
      expect(ids).not.toContain(id);
    } finally {
      await broker.close();
    }
  });
});

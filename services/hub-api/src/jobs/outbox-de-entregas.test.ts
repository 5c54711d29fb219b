import net from 'node:net';
import type { Broker, ConsumeMessage } from '@hub/broker';
import { EXCHANGES, QUEUES, trabalhoDeEntrega } from '@hub/contracts';
import { connectTestBroker, TEST_RABBITMQ_URL, uniqueName, waitFor } from '@hub/testing';
import { assinar, cenario, publicar } from '../features/publicacao/cenario.test-support';
import { type Contexto, encerrarContexto, iniciarContexto } from '../contexto.test-support';

/**
 * A TCP relay between hub-api and RabbitMQ that the test can cut and restore: a real broker outage
 * as the service sees it (its connection drops, reconnections are refused), without stopping the
 * broker the other tests use.
 */
class Interruptor {
  private readonly sockets = new Set<net.Socket>();
  private aberto = true;
  private readonly server = net.createServer((cliente) => {
    if (!this.aberto) return cliente.destroy();
    const broker = net.connect(Number(this.destino.port || 5672), this.destino.hostname);
    for (const [a, b] of [
      [cliente, broker],
      [broker, cliente],
    ] as const) {
      this.sockets.add(a);
      a.pipe(b);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
    }
  });

  constructor(private readonly destino: URL) {}

  async abrir(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const url = new URL(this.destino);
    url.host = `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return url.toString();
  }

  cortar(): void {
    this.aberto = false;
    for (const socket of this.sockets) socket.destroy();
  }

  restaurar(): void {
    this.aberto = true;
  }

  fechar(): Promise<void> {
    this.cortar();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const interruptor = new Interruptor(new URL(TEST_RABBITMQ_URL));
const observados: string[] = [];
const corpos = new Map<string, string>();
const fila = uniqueName('teste.entregas');
let ctx: Contexto;
let observador: Broker;

beforeAll(async () => {
  const url = await interruptor.abrir();
  ctx = await iniciarContexto({ env: { RABBITMQ_URL: url } });
  // A queue of the test's own bound like the worker's: it sees every delivery job hub-api publishes.
  observador = await connectTestBroker('outbox-de-entregas');
  await observador.declare(async (channel) => {
    await channel.assertQueue(fila, { durable: false, exclusive: true });
    await channel.bindQueue(fila, EXCHANGES.entregas, trabalhoDeEntrega.routingKey);
  });
  await observador.consume(fila, async (message: ConsumeMessage) => {
    observados.push(String(message.properties.messageId));
    corpos.set(String(message.properties.messageId), message.content.toString());
  });
});
afterAll(async () => {
  await encerrarContexto(ctx);
  await observador?.close();
  await interruptor.fechar();
});

describe('delivery jobs: published once committed, through the outbox when RabbitMQ is away', () => {
  test('When RabbitMQ is down, then publication still answers 201, its jobs wait in the outbox, and once it is back every delivery job arrives', async () => {
    const c = await cenario(ctx);
    await assinar(ctx, c.tipo.id);
    await assinar(ctx, c.tipo.id);

    interruptor.cortar();
    await waitFor(() => !ctx.hub.broker.connected, { what: 'hub-api to notice the outage' });
    const entregas: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: `pedido-${i}` }));
      expect(response.status).toBe(201);
      entregas.push(...response.body.entregas.map((e: { id: string }) => e.id));
    }
    expect(entregas).toHaveLength(10);
    // Written to the outbox right after the answer (the jobs could not be published).
    await waitFor(
      async () => (await ctx.hub.db.outbox.count({ where: { messageId: { in: entregas }, publicadoEm: null } })) === 10,
      { what: 'the jobs in the outbox' },
    );

    interruptor.restaurar();
    await waitFor(() => entregas.every((id) => observados.includes(id)), {
      timeoutMs: 30_000,
      what: 'every delivery job after the outage',
    });
    // The relay marks its rows after the broker's confirms, so possibly a moment after they arrive.
    await waitFor(
      async () => (await ctx.hub.db.outbox.count({ where: { messageId: { in: entregas }, publicadoEm: null } })) === 0,
      { what: 'the outbox rows marked published' },
    );
  });

  test('When RabbitMQ is up, then each job is published right after the commit, not written to the outbox, and carries what the attempt needs: the delivery, the event, the URL and the body', async () => {
    const c = await cenario(ctx);
    const assinatura = await assinar(ctx, c.tipo.id);
    const response = await publicar(ctx, c.tokenDoDono, c.corpo(), { 'x-request-id': 'req-outbox-1' });
    const [entrega] = response.body.entregas as { id: string }[];
    await waitFor(() => observados.includes(entrega!.id), { what: 'the delivery job' });
    expect(await ctx.hub.db.outbox.count({ where: { messageId: entrega!.id } })).toBe(0);
    const trabalho = trabalhoDeEntrega.schema.parse(JSON.parse(corpos.get(entrega!.id)!));
    expect(trabalho).toMatchObject({
      entrega_id: entrega!.id,
      evento_id: response.body.id,
      url_de_destino: assinatura.url_de_destino,
      request_id: 'req-outbox-1',
    });
    expect(JSON.parse(trabalho.corpo)).toMatchObject({
      id: response.body.id,
      tipo: c.tipo.nome,
      dados: c.corpo().dados,
    });
    // hub-api declared the worker's queue at start, so its copy was kept, not dropped as unroutable.
    const worker = await observador.withChannel((channel) => channel.checkQueue(QUEUES.entregas));
    expect(worker.messageCount).toBeGreaterThan(0);
  });
});

import type { Broker } from '@hub/broker';
import type { SqlPool } from '@hub/database';
import { createLogger } from '@hub/log';
import type { OutboxMessage } from '@hub/outbox';
import { despachanteDeTrabalhos } from './despacho';

// The dispatcher's rule alone, over a broker and a pool that only record what they are given (the
// real paths, RabbitMQ cut and back, are in jobs/outbox-de-entregas.test.ts): a job the broker
// confirms is not written anywhere; one it refuses, or every one while it is away or once the
// dispatcher is stopping, goes to the outbox in one statement.
const logger = createLogger('despacho', 'silent');

function falsos(recusar: Set<string>, conectado = true) {
  const publicados: string[] = [];
  const naOutbox: string[][] = [];
  const broker = {
    connected: conectado,
    publish: async (_exchange: string, _key: string, _body: Buffer, options: { messageId: string }) => {
      if (recusar.has(options.messageId)) throw new Error('nack');
      publicados.push(options.messageId);
    },
  } as unknown as Broker;
  const sql = {
    run: async (_statement: unknown, valores: unknown[]) => {
      naOutbox.push(valores[3] as string[]);
      return [];
    },
  } as unknown as SqlPool;
  return { broker, sql, publicados, naOutbox };
}

const trabalho = (messageId: string): OutboxMessage => ({
  exchange: 'hub.entregas',
  routingKey: 'entrega.tentar',
  messageId,
  body: { entrega_id: messageId },
});

test('When the broker confirms some jobs and refuses one, then only the refused one is written to the outbox', async () => {
  const f = falsos(new Set(['b']));
  const d = despachanteDeTrabalhos({ broker: f.broker, sql: f.sql, logger });
  d.enviar(['a', 'b', 'c'].map(trabalho));
  await d.parar();
  expect(f.publicados.sort()).toEqual(['a', 'c']);
  expect(f.naOutbox).toEqual([['b']]);
});

test('When RabbitMQ is away, or the dispatcher is stopping, then the jobs go to the outbox without a publish', async () => {
  const fora = falsos(new Set(), false);
  const d = despachanteDeTrabalhos({ broker: fora.broker, sql: fora.sql, logger });
  d.enviar(['a', 'b'].map(trabalho));
  await d.parar();
  expect(fora.publicados).toEqual([]);
  expect(fora.naOutbox).toEqual([['a', 'b']]);

  const f = falsos(new Set());
  const parando = despachanteDeTrabalhos({ broker: f.broker, sql: f.sql, logger });
  await parando.parar();
  parando.enviar([trabalho('c')]);
  await parando.parar();
  expect(f.publicados).toEqual([]);
  expect(f.naOutbox).toEqual([['c']]);
});

test('When more jobs are in flight than allowed, then the next ones go to the outbox at once', async () => {
  const f = falsos(new Set());
  const d = despachanteDeTrabalhos({ broker: f.broker, sql: f.sql, logger, maximoEmVoo: 2 });
  d.enviar(['a', 'b'].map(trabalho));
  d.enviar([trabalho('c')]);
  await d.parar();
  expect(f.publicados.sort()).toEqual(['a', 'b']);
  expect(f.naOutbox).toEqual([['c']]);
});

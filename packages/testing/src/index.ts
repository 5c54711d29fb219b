import { Broker } from '@hub/broker';
import { createLogger } from '@hub/log';

export * from './bundle';
export * from './identity';
export { generateSigningKey, type SigningKey } from '@hub/identity-stand-in';
export * from './patroni';
export { PACOTES_DO_PATRONI } from './patroni-config';
export * from './postgres';
export * from './process';
export * from './proxy';
export * from './queda-do-banco';
export * from './rabbit';
export * from './wait';
export {
  createTestDatabase,
  dropDatabase,
  type TestDatabase,
  unusedTestDatabase,
} from '@hub/database/test-support';

export const TEST_RABBITMQ_URL = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A real broker connection for a test file. Close it in afterAll. */
export function connectTestBroker(name: string): Promise<Broker> {
  return new Broker(TEST_RABBITMQ_URL, createLogger(name), { name: `test:${name}` }).start();
}

/** A name unique to this test run, for queues and exchanges that tests declare. */
export const uniqueName = (prefix: string) =>
  `${prefix}.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
export * from './rotas';
export * from './openapi-lint';

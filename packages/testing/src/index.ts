import { Broker } from '@hub/broker';
import { createLogger } from '@hub/log';

export * from './identity';
export { createTestDatabase, type TestDatabase } from '@hub/database';

export const TEST_RABBITMQ_URL = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A real broker connection for a test file. Close it in afterAll. */
export function connectTestBroker(name: string): Promise<Broker> {
  return new Broker(TEST_RABBITMQ_URL, createLogger(name), { name: `test:${name}` }).start();
}

/** Polls until `check` returns a truthy value (or stops throwing); never a fixed sleep. */
export async function waitFor<T>(check: () => Promise<T> | T, options: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? 'a condition'}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 25));
  }
}

/** A name unique to this test run, for queues and exchanges that tests declare. */
export const uniqueName = (prefix: string) => `${prefix}.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`;

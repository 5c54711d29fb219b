import type { TestAccess } from '@hub/access/testing';
import type { ColaboradorSincronizado } from '@hub/contracts';
import { createLogger } from '@hub/log';
import { createTestDatabase, type TestIdentity, uniqueName, waitFor } from '@hub/testing';
import { functionConfig } from './config';
import { MIGRATIONS_DIR, type RunningFunction, startFunction } from './start';

export interface TestFunction extends RunningFunction {
  databaseUrl: string;
  /**
   * Waits until the consumer has handled the `occurrence`-th message of this collaborator with this
   * versao (1 for the first); tells whether that one changed the projection.
   */
  handled(termoauthId: string, versao: number, occurrence?: number): Promise<{ changed: boolean }>;
  close(): Promise<void>;
}

/**
 * The real function service on a free port with a fresh database, its permissions resolved by a
 * test access service, consuming collaborators from a queue of its own (bound to the real
 * identity exchange) so that parallel test files do not take each other's messages.
 */
export async function startFunctionForTests(identity: TestIdentity, access: TestAccess): Promise<TestFunction> {
  const database = await createTestDatabase('fn', MIGRATIONS_DIR);
  const config = functionConfig.parse({
    ...identity.env,
    FUNCTION_DATABASE_URL: database.url,
    ACCESS_URL: access.url,
    ACCESS_CACHE_TTL: '1s',
    OUTBOX_POLL_INTERVAL: '250ms',
  });
  const handled = new Map<string, boolean[]>();
  const running = await startFunction(config, createLogger('function'), {
    port: 0,
    colaboradoresQueue: uniqueName('test.function.colaboradores'),
    onColaborador: (mensagem: ColaboradorSincronizado, changed) => {
      const key = `${mensagem.termoauth_id}@${mensagem.versao}`;
      handled.set(key, [...(handled.get(key) ?? []), changed]);
    },
  });
  return {
    ...running,
    databaseUrl: database.url,
    handled: async (termoauthId, versao, occurrence = 1) => {
      const key = `${termoauthId}@${versao}`;
      const results = await waitFor(
        () => ((handled.get(key)?.length ?? 0) >= occurrence ? handled.get(key) : undefined),
        {
          what: `message ${key} handled ${occurrence} time(s)`,
        },
      );
      return { changed: results[occurrence - 1]! };
    },
    close: async () => {
      await running.stop();
      await database.drop();
    },
  };
}

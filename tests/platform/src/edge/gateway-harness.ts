import { createGatewayApp, readConfig, upstreamOf } from '@hub/gateway';
import { createLogger } from '@hub/log';
import type { TestIdentity } from '@hub/testing';
import { PRAZO_MS, REQUEST_TIMEOUT_MS, type Sistema } from './differential';
import { startGravador, type Gravador } from './recorder';

export interface Recorders {
  access: Gravador;
  function: Gravador;
  'hub-api': Gravador;
  todos: Gravador[];
  close(): Promise<void>;
}

/** Three recording servers standing in for access, function and hub-api. */
export async function startRecorders(): Promise<Recorders> {
  const access = await startGravador('access');
  const fn = await startGravador('function');
  const hubApi = await startGravador('hub-api');
  const todos = [access, fn, hubApi];
  return {
    access,
    function: fn,
    'hub-api': hubApi,
    todos,
    close: async () => {
      await Promise.all(todos.map((g) => g.close()));
    },
  };
}

export interface GatewayNaFrente {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The settings the gateway runs with in front of the recorders: limits out of the way of a few hundred cases. */
export const gatewayEnv = (identity: TestIdentity, gravadores: Recorders): Record<string, string> => ({
  ...identity.env,
  HUB_AMBIENTE: 'LOCALHOST',
  ACCESS_URL: gravadores.access.url,
  FUNCTION_URL: gravadores.function.url,
  HUB_API_URL: gravadores['hub-api'].url,
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_USER_PER_MINUTE: '1000000',
  GATEWAY_TOKEN_CACHE: '10m',
});

/**
 * The real gateway, in-process, in front of the recorders, with both callers' tokens verified once
 * (so their requests take the gateway's fast path, as a busy caller's do), and the recorders emptied.
 */
export async function startGatewayNaFrente(
  env: Record<string, string>,
  gravadores: Recorders,
  tokens: string[],
): Promise<GatewayNaFrente> {
  const gateway = createGatewayApp({ config: readConfig(env), logger: createLogger('gateway') });
  const running = await gateway.listen(0, '127.0.0.1', { requestTimeoutMs: REQUEST_TIMEOUT_MS });
  for (const token of tokens) {
    const resposta = await fetch(`${running.url}/eventos/aquecer`, { headers: { authorization: `Bearer ${token}` } });
    if (resposta.status !== 200) throw new Error(`the gateway's warm-up answered ${resposta.status}`);
  }
  for (const g of gravadores.todos) g.zerar();
  return {
    url: running.url,
    port: running.port,
    close: async () => {
      running.server.closeAllConnections();
      await running.close();
      gateway.close();
    },
  };
}

/** The gateway as a system under test for one case. */
export const sistemaDoGateway = (
  gateway: GatewayNaFrente,
  gravadores: Recorders,
  tokens: Sistema['tokens'],
): Sistema => ({
  alvo: { host: '127.0.0.1', port: gateway.port },
  gravadores: gravadores.todos,
  tokens,
  rotear: upstreamOf,
  prazoMs: PRAZO_MS,
});

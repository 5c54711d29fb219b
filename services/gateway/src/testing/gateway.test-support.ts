import type { Server } from 'node:http';
import { listen, type RouteSpec, type RunningServer } from '@hub/http';
import { createLogger } from '@hub/log';
import { type TestIdentity, waitFor } from '@hub/testing';
import request from 'supertest';
import { createGatewayApp } from '../app';
import { readConfig } from '../config';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.test-support';

export interface GatewayUnderTest {
  url: string;
  /** The metrics port's base URL. */
  metricsUrl: string;
  upstreams: { access: FakeUpstream; function: FakeUpstream; hubApi: FakeUpstream };
  /** The public port's node:http server. */
  server: Server;
  /** Drops the upstream connections, then closes the ports: requests under way fail at once. */
  close(): Promise<void>;
  /** Stops as main.ts does: the public port closes, letting the answers under way finish, then the upstream connections go. */
  parar(): Promise<void>;
}

/** The real gateway on port 0 in front of three fake services; `env` adds or overrides settings. */
export async function startGatewayWithFakes(
  env: Record<string, string> = {},
  specs: { access?: RouteSpec[]; function?: RouteSpec[]; hubApi?: RouteSpec[] } = {},
  /** More instances of hub-api behind the gateway (their URLs follow the first in HUB_API_URL). */
  extra: { hubApiExtra?: string[] } = {},
): Promise<GatewayUnderTest> {
  const upstreams = {
    access: await startFakeUpstream('access', specs.access),
    function: await startFakeUpstream('function', specs.function),
    hubApi: await startFakeUpstream('hub-api', specs.hubApi),
  };
  const config = readConfig({
    HUB_AMBIENTE: 'LOCALHOST',
    ACCESS_URL: upstreams.access.url,
    FUNCTION_URL: upstreams.function.url,
    HUB_API_URL: [upstreams.hubApi.url, ...(extra.hubApiExtra ?? [])].join(','),
    // The fakes' slow routes (…/devagar, …/lento) must not lower the bound for the tests after them;
    // a test of the adaptive bound sets its own.
    GATEWAY_TARGET_LATENCY: '60s',
    GATEWAY_PUBLICATION_TARGET_LATENCY: '60s',
    ...env,
  });
  const gateway = createGatewayApp({ config, logger: createLogger('gateway') });
  const server: RunningServer = await gateway.listen(0);
  const metrics: RunningServer = await listen(gateway.metricsApp, 0, config.GATEWAY_METRICS_HOST);
  /** The metrics port and the fake services, once the public port is closed. */
  const fecharOResto = async () => {
    await metrics.close();
    // A test may have stopped an upstream already to play "service down".
    await Promise.all(Object.values(upstreams).map((u) => u.close().catch(() => undefined)));
  };
  return {
    url: server.url,
    metricsUrl: metrics.url,
    upstreams,
    server: server.server,
    close: async () => {
      gateway.close();
      await server.close();
      await fecharOResto();
    },
    parar: async () => {
      await server.close();
      gateway.close();
      await fecharOResto();
    },
  };
}

/** The gateway in front of fakes, with the test identity, whose caller's token was verified once already. */
export async function startGatewayWithKnownCaller(
  identity: TestIdentity,
  token: string,
  env: Record<string, string> = {},
): Promise<GatewayUnderTest> {
  const gateway = await startGatewayWithFakes({ ...identity.env, ...env });
  await request(gateway.url).get('/auth').set('authorization', `Bearer ${token}`).expect(200);
  return gateway;
}

/**
 * The two callers every proxy behaviour must hold for, as the headers of each: one that names
 * nobody (counted by address) and one whose token was verified a moment before (counted as itself).
 * `token` is read when the headers are, after the test's beforeAll.
 */
export const osDoisChamadores = (token: () => string) =>
  [
    ['no token', (): Record<string, string> => ({})],
    ['a token verified before', (): Record<string, string> => ({ authorization: `Bearer ${token()}` })],
  ] as const;

/**
 * The gateway's /saude/prontidao once it answers `status`: it asks the services once per
 * PRONTIDAO_CACHE_MS, so a change is seen within that time, not at once.
 */
export function readinessOnce(url: string, status: number): Promise<request.Response> {
  return waitFor(async () => {
    const response = await request(url).get('/saude/prontidao');
    return response.status === status ? response : undefined;
  });
}

/** The real gateway in front of one fake hub-api, with node:http's request timeout of `requestTimeoutMs`. */
export async function startGatewayWithRequestTimeout(
  env: Record<string, string>,
  requestTimeoutMs: number,
): Promise<{ url: string; hubApi: FakeUpstream; close(): Promise<void> }> {
  const hubApi = await startFakeUpstream('hub-api');
  const config = readConfig({ ...env, HUB_AMBIENTE: 'LOCALHOST', HUB_API_URL: hubApi.url });
  const gateway = createGatewayApp({ config, logger: createLogger('gateway') });
  const server = await gateway.listen(0, '127.0.0.1', { requestTimeoutMs });
  return {
    url: server.url,
    hubApi,
    close: async () => {
      gateway.close();
      await server.close();
      await hubApi.close();
    },
  };
}

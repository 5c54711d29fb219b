import { createGatewayApp } from '@hub/gateway/src/app';
import { readConfig } from '@hub/gateway/src/config';
import type { RunningServer } from '@hub/http';
import { createLogger } from '@hub/log';
import { type Contexto, encerrarContexto, iniciarContexto } from '@hub/hub-api/src/contexto.test-support';
import { startHubApiForTests, type TestHubApi } from '@hub/hub-api/src/hub-api.test-support';

export interface HubComGateway {
  ctx: Contexto;
  /** The other hub-api instances, on the same database. */
  replicas: TestHubApi[];
  gatewayUrl: string;
  encerrar(): Promise<void>;
}

/**
 * The real gateway in process, in front of the test identity, access and one hub-api or more on one
 * database (each request to the next instance in turn). Lighter than startPlatform: no delivery
 * worker, no processes; for what goes through the gateway's edge and its pages (the portal).
 */
export async function iniciarHubComGateway(
  options: { instancias?: number; hub?: Parameters<typeof iniciarContexto>[0] } = {},
): Promise<HubComGateway> {
  const ctx = await iniciarContexto(options.hub);
  const replicas: TestHubApi[] = [];
  for (let i = 1; i < (options.instancias ?? 1); i++)
    replicas.push(await startHubApiForTests(ctx.identity, ctx.access, { databaseUrl: ctx.hub.databaseUrl }));
  const config = readConfig({
    ...ctx.identity.env,
    HUB_AMBIENTE: 'LOCALHOST',
    HUB_API_URL: [ctx.hub.url, ...replicas.map((r) => r.url)].join(','),
    ACCESS_URL: ctx.access.url,
  });
  const app = createGatewayApp({ config, logger: createLogger('gateway') });
  const gateway: RunningServer = await app.listen(0);
  return {
    ctx,
    replicas,
    gatewayUrl: gateway.url,
    encerrar: async () => {
      app.close();
      await gateway.close();
      for (const replica of replicas) await replica.close();
      await encerrarContexto(ctx);
    },
  };
}

/** What a test through the gateway writes with, for the suites (tests/panel) that reach hub-api's helpers through here. */
export { auth, criarAplicativo } from '@hub/hub-api/src/contexto.test-support';
export { gravarEvento, gravarTentativa } from '@hub/hub-api/src/features/eventos/linhas.test-support';
export { cenario } from '@hub/hub-api/src/features/publicacao/cenario.test-support';
export { waitFor } from '@hub/testing';

import './rastreamento';
import { listen, runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { pararRastreamento } from '@hub/tracing/iniciar';
import { createGatewayApp } from './app';
import { readConfig } from './config';
import { upstreamsFrom } from './routes';

const logger = createLogger('gateway');

runMain(logger, async () => {
  const config = readConfig();
  const gateway = createGatewayApp({ config, logger });
  const server = await gateway.listen(config.GATEWAY_PORT, config.HOST);
  const metrics = await listen(gateway.metricsApp, config.GATEWAY_METRICS_PORT, config.GATEWAY_METRICS_HOST);
  const upstreams = Object.values(upstreamsFrom(config)).map((u) => ({ name: u.name, url: u.url, enabled: u.enabled }));
  logger.info({ url: server.url, metrics: `${metrics.url}/metrics`, upstreams }, 'gateway listening');
  return {
    stop: async () => {
      await server.close();
      await metrics.close();
      gateway.close();
      await pararRastreamento();
    },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT,
  };
});

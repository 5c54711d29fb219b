import { listen, runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { createGatewayApp } from './app';
import { readConfig } from './config';
import { upstreamsFrom } from './routes';

const logger = createLogger('gateway');

runMain(logger, async () => {
  const config = readConfig();
  const gateway = createGatewayApp({ config, logger });
  const server = await listen(gateway.app, config.GATEWAY_PORT);
  const upstreams = Object.values(upstreamsFrom(config)).map((u) => ({ name: u.name, url: u.url, enabled: u.enabled }));
  logger.info({ url: server.url, upstreams }, 'gateway listening');
  return {
    stop: async () => {
      await server.close();
      gateway.close();
    },
  };
});

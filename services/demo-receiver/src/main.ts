import { listen, runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { createApp } from './app';
import { readConfig } from './config';
import { createJwksSource } from './jwks';

const logger = createLogger('demo-receiver');

runMain(logger, async () => {
  const config = readConfig();
  const jwks = createJwksSource({
    url: config.HUB_JWKS_URL,
    onWarning: (message, error) => logger.warn({ err: error }, message),
  });
  const server = await listen(createApp({ logger, jwks }), config.DEMO_RECEIVER_PORT);
  logger.info(
    { url: server.url, jwks: config.HUB_JWKS_URL },
    'demo-receiver listening; deliveries go to POST /webhooks',
  );
  return { stop: () => server.close() };
});

import { Broker } from '@hub/broker';
import { declareInternalTopology } from '@hub/contracts';
import { listen, runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { createIdentityDevApp } from '@hub/identity-stand-in';
import { readConfig } from './config';
import { loadOrCreateKey } from './key-file';

const logger = createLogger('identity-dev');

runMain(logger, async () => {
  const config = readConfig();
  if (config.HUB_AMBIENTE === 'PRODUCTION') {
    throw new Error(
      'identity-dev is a stand-in for local runs and tests; it refuses to start with HUB_AMBIENTE=PRODUCTION',
    );
  }
  const key = await loadOrCreateKey(config.IDENTITY_DEV_KEY_FILE);
  const broker = await new Broker(config.RABBITMQ_URL, logger, { name: 'identity-dev' }).start();
  await broker.declare(declareInternalTopology);
  const app = createIdentityDevApp({
    issuer: {
      issuer: config.IDENTITY_ISSUER,
      audience: config.IDENTITY_AUDIENCE,
      ttlSeconds: Math.round(config.IDENTITY_DEV_TOKEN_TTL / 1000),
      key,
    },
    broker,
    logger,
  });
  const server = await listen(app, config.IDENTITY_DEV_PORT, config.HOST);
  logger.info({ url: server.url }, 'identity-dev listening');
  return {
    stop: async () => {
      await server.close();
      await broker.close();
    },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT,
  };
});

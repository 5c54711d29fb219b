import './rastreamento';
import { runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { pararRastreamento } from '@hub/tracing/iniciar';
import { readConfig } from './config';
import { startHubApi } from './start';

const logger = createLogger('hub-api');

runMain(logger, async () => {
  const config = readConfig();
  const running = await startHubApi(config, logger);
  logger.info({ url: running.url, socket: running.socket }, 'hub-api listening');
  return {
    stop: async () => {
      await running.stop();
      await pararRastreamento();
    },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT,
  };
});

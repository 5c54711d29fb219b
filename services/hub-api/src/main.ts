import { runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { readConfig } from './config';
import { startHubApi } from './start';

const logger = createLogger('hub-api');

runMain(logger, async () => {
  const config = readConfig();
  const running = await startHubApi(config, logger);
  logger.info({ url: running.url }, 'hub-api listening');
  return { stop: () => running.stop(), shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT };
});

import { runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { readConfig } from './config';
import { startFunction } from './start';

const logger = createLogger('function');

runMain(logger, async () => {
  const config = readConfig();
  const running = await startFunction(config, logger);
  logger.info({ url: running.url, socket: running.socket }, 'function listening');
  return { stop: () => running.stop(), shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT };
});

import { runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { readConfig } from './config';
import { startAccess } from './start';

const logger = createLogger('access');

runMain(logger, async () => {
  const config = readConfig();
  const running = await startAccess(config, logger);
  logger.info({ url: running.url, socket: running.socket }, 'access listening');
  return { stop: () => running.stop(), shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT };
});

import { runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { readConfig } from './config';
import { startAccess } from './start';

const logger = createLogger('access');

runMain(logger, async () => {
  const running = await startAccess(readConfig(), logger);
  logger.info({ url: running.url }, 'access listening');
  return running;
});

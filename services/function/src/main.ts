import { runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { readConfig } from './config';
import { startFunction } from './start';

const logger = createLogger('function');

runMain(logger, async () => {
  const running = await startFunction(readConfig(), logger);
  logger.info({ url: running.url }, 'function listening');
  return running;
});

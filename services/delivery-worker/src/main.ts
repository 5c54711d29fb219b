import { runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { readConfig } from './config';
import { startDeliveryWorker } from './start';

const logger = createLogger('delivery-worker');

runMain(logger, async () => {
  const running = await startDeliveryWorker(readConfig(), logger);
  logger.info({ url: running.url }, 'delivery-worker listening');
  return running;
});

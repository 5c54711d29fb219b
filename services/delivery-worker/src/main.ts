import { runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { readConfig } from './config';
import { startDeliveryWorker } from './start';

const logger = createLogger('delivery-worker');

runMain(logger, async () => {
  const config = readConfig();
  const running = await startDeliveryWorker(config, logger);
  logger.info({ url: running.url }, 'delivery-worker listening');
  return { stop: () => running.stop(), shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT };
});

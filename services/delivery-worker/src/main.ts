import './rastreamento';
import { runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { pararRastreamento } from '@hub/tracing/iniciar';
import { readConfig } from './config';
import { startDeliveryWorker } from './start';

const logger = createLogger('delivery-worker');

runMain(logger, async () => {
  const config = readConfig();
  const running = await startDeliveryWorker(config, logger);
  logger.info({ url: running.url }, 'delivery-worker listening');
  return {
    stop: async () => {
      await running.stop();
      await pararRastreamento();
    },
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT,
  };
});

import { listen, runMain } from '@hub/http';
import { createLogger } from '@hub/log';
import { createVerifier } from '@hub/webhook-verifier';
import { createApp } from './app';
import { readConfig } from './config';

const logger = createLogger('demo-receiver');

runMain(logger, async () => {
  const config = readConfig();
  const verifier = createVerifier({
    jwksUrl: config.HUB_JWKS_URL,
    allowInsecureHttpJwks: config.HUB_JWKS_ALLOW_HTTP,
    // No expectedSubscription here: each call passes the one its URL names (POST /webhooks/{assinatura_id}).
    onWarning: (message, error) => logger.warn({ err: error }, message),
  });
  const server = await listen(createApp({ logger, verifier }), config.DEMO_RECEIVER_PORT, config.HOST);
  logger.info(
    { url: server.url, jwks: config.HUB_JWKS_URL },
    'demo-receiver listening; deliveries go to POST /webhooks',
  );
  return { stop: () => server.close(), shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT };
});

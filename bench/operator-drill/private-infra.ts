import { createServer } from 'node:http';
import { startPrivatePostgres, startPrivateRabbit } from '../../packages/testing/src';

/**
 * The operator drill's own PostgreSQL and RabbitMQ (never the machine's shared ones): started from
 * the installed binaries, their URLs printed as shell exports for `pnpm start`, kept alive until
 * Ctrl-C. A control port (DRILL_CONTROL_PORT, default 18090) stops and starts them:
 *   curl -XPOST 127.0.0.1:18090/pg/restart?mode=fast   (fast | immediate | kill)
 *   curl -XPOST 127.0.0.1:18090/pg/stop   ·  /pg/start
 *   curl -XPOST 127.0.0.1:18090/rabbit/restart  ·  /rabbit/stop  ·  /rabbit/start
 * Each answers when the action is over, with how long it took.
 *
 *   npx tsx bench/operator-drill/private-infra.ts
 */
async function main() {
  const pg = await startPrivatePostgres();
  const rabbit = await startPrivateRabbit({ nodes: 1 });
  const base = pg.url.replace(/\/postgres$/, '');
  const say = (text: string) => process.stdout.write(`${text}\n`);
  say(`export ACCESS_DATABASE_URL=${base}/hub_access`);
  say(`export FUNCTION_DATABASE_URL=${base}/hub_function`);
  say(`export HUB_DATABASE_URL=${base}/hub_events`);
  say(`export RABBITMQ_URL=${rabbit.urls[0]}`);
  say(`# PostgreSQL admin: ${pg.url}`);

  type Mode = Parameters<typeof pg.stop>[0];
  const actions: Record<string, (mode?: string) => Promise<void>> = {
    '/pg/restart': (mode) => pg.restart((mode ?? 'fast') as Mode),
    '/pg/stop': (mode) => pg.stop((mode ?? 'fast') as Mode),
    '/pg/start': () => pg.start(),
    '/rabbit/restart': () => rabbit.restart(0),
    '/rabbit/stop': () => rabbit.stop(0),
    '/rabbit/start': () => rabbit.start(0),
  };
  const port = Number(process.env.DRILL_CONTROL_PORT ?? 18090);
  createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const action = req.method === 'POST' ? actions[url.pathname] : undefined;
    if (!action) {
      res.writeHead(404).end(`${Object.keys(actions).join(' ')}\n`);
      return;
    }
    const started = Date.now();
    try {
      await action(url.searchParams.get('mode') ?? undefined);
      const line = `${new Date().toISOString()} ${url.pathname}${url.search} done in ${Date.now() - started} ms`;
      say(line);
      res.writeHead(200).end(`${line}\n`);
    } catch (error) {
      res.writeHead(500).end(`${(error as Error).message}\n`);
    }
  }).listen(port, '127.0.0.1', () => say(`# control: http://127.0.0.1:${port}`));

  const close = async () => {
    await Promise.allSettled([pg.close(), rabbit.close()]);
    process.exit(0);
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});

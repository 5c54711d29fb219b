import { monitorEventLoopDelay } from 'node:perf_hooks';
import { problemHandler, routeNotFound } from '@hub/http';
import type { Logger } from '@hub/log';
import express, { type Express, type RequestHandler } from 'express';

const LOOP_RESOLUTION_MS = 10;
const BUCKETS = [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

interface Series {
  counts: number[];
  sum: number;
  count: number;
}

/**
 * Request durations per upstream and status in the Prometheus text format. Written by hand (a
 * few lines) so the gateway's hot path carries no metrics library. `record` goes on the public app;
 * `app` is served on its own port, so that what the gateway reveals about its traffic stays inside.
 */
export function createMetrics(
  upstreamOfPath: (path: string) => string | undefined,
  logger: Logger,
): {
  record: RequestHandler;
  app: Express;
} {
  const series = new Map<string, Series>();
  const startedAt = Date.now();
  // Stalls of the event loop delay every request in flight; worth seeing next to the durations.
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loopDelay.enable();
  // The histogram counts the sampling interval itself; only what goes beyond it is delay.
  const delaySeconds = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS) / 1000;

  const record: RequestHandler = (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const key = `upstream="${upstreamOfPath(req.path) ?? 'gateway'}",method="${req.method}",status="${res.statusCode}"`;
      let s = series.get(key);
      if (!s) {
        s = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
        series.set(key, s);
      }
      for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]!) s.counts[i]!++;
      s.sum += seconds;
      s.count++;
    });
    next();
  };

  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', (_req, res) => {
    const lines = [
      '# HELP gateway_http_request_duration_seconds Duration of requests through the gateway',
      '# TYPE gateway_http_request_duration_seconds histogram',
    ];
    for (const [labels, s] of series) {
      lines.push(
        ...BUCKETS.map((le, i) => `gateway_http_request_duration_seconds_bucket{${labels},le="${le}"} ${s.counts[i]}`),
      );
      lines.push(`gateway_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`);
      lines.push(`gateway_http_request_duration_seconds_sum{${labels}} ${s.sum}`);
      lines.push(`gateway_http_request_duration_seconds_count{${labels}} ${s.count}`);
    }
    const memory = process.memoryUsage();
    lines.push(
      '# HELP process_resident_memory_bytes Resident memory size in bytes',
      '# TYPE process_resident_memory_bytes gauge',
      `process_resident_memory_bytes ${memory.rss}`,
      '# HELP process_uptime_seconds Seconds since the gateway started',
      '# TYPE process_uptime_seconds gauge',
      `process_uptime_seconds ${(Date.now() - startedAt) / 1000}`,
      '# HELP nodejs_eventloop_delay_seconds Event loop delay since the last scrape',
      '# TYPE nodejs_eventloop_delay_seconds summary',
      `nodejs_eventloop_delay_seconds{quantile="0.5"} ${delaySeconds(loopDelay.percentile(50))}`,
      `nodejs_eventloop_delay_seconds{quantile="0.99"} ${delaySeconds(loopDelay.percentile(99))}`,
      `nodejs_eventloop_delay_seconds{quantile="1"} ${delaySeconds(loopDelay.max)}`,
    );
    loopDelay.reset();
    res.type('text/plain; version=0.0.4').send(`${lines.join('\n')}\n`);
  });
  app.use(routeNotFound);
  app.use(problemHandler(logger));
  return { record, app };
}

/**
 * On the public port, /metrics is nobody's route, however it is spelt: not the gateway's (it has its
 * own port) and never a service's, even through dot segments (`/auth/../metrics`, `%2e%2e`) or case
 * (Express matches routes case-insensitively) that a service behind might resolve to its own /metrics.
 */
export const hideMetrics: RequestHandler = (req, res, next) => {
  if (!/metrics/i.test(req.path)) return next();
  const path = new URL(`http://gateway${req.path}`).pathname.toLowerCase();
  if (path === '/metrics' || path.startsWith('/metrics/')) return routeNotFound(req, res, next);
  next();
};

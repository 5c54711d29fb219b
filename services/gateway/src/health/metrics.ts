import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { problemHandler, routeNotFound } from '@hub/http';
import type { Logger } from '@hub/log';
import express, { type Express, type RequestHandler } from 'express';

const LOOP_RESOLUTION_MS = 10;
const BUCKETS = [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

interface Series {
  /** `upstream="…",method="…",status="…"`, written once when the series is first seen. */
  labels: string;
  /** Requests per bucket, not cumulative (summed when scraped). */
  counts: number[];
  sum: number;
  count: number;
}

/** Records one request's duration in its series. */
export type ObserveRequest = (upstream: string, method: string, status: number, seconds: number) => void;

/**
 * Request durations per upstream and status in the Prometheus text format. Written by hand (a
 * few lines) so the gateway's hot path carries no metrics library: a request costs three map
 * lookups and two additions, no label string. `record` goes on the express app; `app` is served on
 * its own port, so that what the gateway reveals about its traffic stays inside.
 */
export function createMetrics(
  upstreamOfPath: (path: string) => string | undefined,
  logger: Logger,
): {
  record: RequestHandler;
  observe: ObserveRequest;
  app: Express;
} {
  /** upstream → method → status → series; the labels are built the first time only. */
  const series = new Map<string, Map<string, Map<number, Series>>>();
  const startedAt = Date.now();
  // Stalls of the event loop delay every request in flight; worth seeing next to the durations.
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loopDelay.enable();
  // The histogram counts the sampling interval itself; only what goes beyond it is delay.
  const delaySeconds = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS) / 1000;

  const observe: ObserveRequest = (upstream, method, status, seconds) => {
    let byMethod = series.get(upstream);
    if (!byMethod) {
      byMethod = new Map();
      series.set(upstream, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (!byStatus) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let s = byStatus.get(status);
    if (!s) {
      s = {
        labels: `upstream="${upstream}",method="${method}",status="${status}"`,
        counts: BUCKETS.map(() => 0),
        sum: 0,
        count: 0,
      };
      byStatus.set(status, s);
    }
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
    if (bucket < BUCKETS.length) s.counts[bucket]!++;
    s.sum += seconds;
    s.count++;
  };

  const record: RequestHandler = (req, res, next) => {
    const start = performance.now();
    res.once('finish', () => {
      observe(upstreamOfPath(req.path) ?? 'gateway', req.method, res.statusCode, (performance.now() - start) / 1000);
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
    for (const byMethod of series.values())
      for (const byStatus of byMethod.values())
        for (const { labels, counts, sum, count } of byStatus.values()) {
          let cumulative = 0;
          for (let i = 0; i < BUCKETS.length; i++) {
            cumulative += counts[i]!;
            lines.push(`gateway_http_request_duration_seconds_bucket{${labels},le="${BUCKETS[i]}"} ${cumulative}`);
          }
          lines.push(`gateway_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${count}`);
          lines.push(`gateway_http_request_duration_seconds_sum{${labels}} ${sum}`);
          lines.push(`gateway_http_request_duration_seconds_count{${labels}} ${count}`);
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
  return { record, observe, app };
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

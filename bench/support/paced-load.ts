import { Agent, request } from 'node:http';

export interface PacedResult {
  sent: number;
  ok: number;
  non2xx: number;
  failed: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** [seconds since the start, latency ms] of the slowest requests, for finding periodic stalls. */
  slowest: [number, number][];
}

/** The p-th percentile (nearest rank) of ascending values. */
export const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : Number.NaN;

/**
 * An open-loop load: one request every 1000/rate ms, evenly spaced, whatever the answers take
 * (autocannon's rate mode instead sends each connection's share of a second back to back at the
 * start of the second, so its latencies are those of bursts). Latency is measured from the moment
 * a request is sent to the end of its response, in milliseconds.
 */
export interface PacedOptions {
  /** GET when absent. */
  method?: string;
  body?: string;
  /** Called with each 2xx answer's body and the moment (performance.now()) it ended; bodies are read only then. */
  onAnswer?: (body: string, endedAt: number) => void;
}

export async function pacedLoad(
  url: string,
  headers: Record<string, string>,
  rate: number,
  durationSeconds: number,
  options: PacedOptions = {},
): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const target = new URL(url);
  const latencies: number[] = [];
  const timeline: [number, number][] = [];
  let failed = 0;
  let non2xx = 0;
  const total = Math.round(rate * durationSeconds);
  const interval = 1000 / rate;
  const pending: Promise<void>[] = [];

  const send = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: options.method ?? 'GET',
          headers,
          agent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          if (options.onAnswer) res.on('data', (chunk: Buffer) => chunks.push(chunk));
          else res.resume();
          res.on('end', () => {
            const ended = performance.now();
            if (res.statusCode && res.statusCode < 300) {
              latencies.push(ended - started);
              timeline.push([(started - begin) / 1000, ended - started]);
              options.onAnswer?.(Buffer.concat(chunks).toString('utf8'), ended);
            } else non2xx++;
            resolve();
          });
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end(options.body);
    });

  const begin = performance.now();
  let sent = 0;
  await new Promise<void>((done) => {
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - begin) / interval) + 1);
      while (sent < due) {
        pending.push(send());
        sent++;
      }
      if (sent >= total) return done();
      setTimeout(tick, Math.max(0, begin + sent * interval - performance.now()));
    };
    tick();
  });
  await Promise.all(pending);
  const elapsed = (performance.now() - begin) / 1000;
  agent.destroy();
  const sorted = latencies.sort((a, b) => a - b);
  const slowest = timeline.sort((a, b) => b[1] - a[1]).slice(0, 20);
  return {
    sent,
    ok: latencies.length,
    non2xx,
    failed,
    requestsPerSecond: sent / elapsed,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    slowest,
  };
}

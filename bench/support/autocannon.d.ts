// The part of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    /** Requests in all (instead of a duration). */
    amount?: number;
    overallRate?: number;
    timeout?: number;
    ignoreCoordinatedOmission?: boolean;
    /** Each request in turn; setupRequest may change it before it is sent. */
    requests?: { setupRequest?: (req: { headers?: Record<string, string> }) => unknown }[];
  }
  interface Histogram {
    average: number;
    mean: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
  }
  interface Result {
    requests: Histogram & { total: number };
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}

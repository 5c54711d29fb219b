// CPU profiles of services inside a platform started by a benchmark (node --cpu-prof is refused in
// NODE_OPTIONS; a --require preload is not). Every process loads it; only the services named in
// BENCH_PROFILE_SERVICES (default hub-api; e.g. "hub-api,gateway,delivery-worker": their
// services/<name>/dist/main.js) start V8's sampling profiler, and write the profile at exit (and on
// SIGUSR2) to BENCH_PROFILE_DIR (default /tmp), to open in Chrome DevTools or speedscope.
//   BENCH_ONLY_SATURATION=1 NODE_OPTIONS="--require $PWD/bench/profiling/cpu-profile.cjs" npx tsx bench/publication/throughput-and-latency.ts
// bench/profiling/cpu-profile-summary.cjs sums a profile's self and total time by function.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const path = require('node:path');

const services = (process.env.BENCH_PROFILE_SERVICES ?? 'hub-api').split(',').map((s) => s.trim());
const service = services.find((s) => s && (process.argv[1] ?? '').includes(path.join('services', s, 'dist')));
if (service) {
  const dir = process.env.BENCH_PROFILE_DIR ?? '/tmp';
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  let n = 0;
  const write = () =>
    session.post('Profiler.stop', (error, result) => {
      if (!error)
        writeFileSync(path.join(dir, `${service}-${process.pid}-${n++}.cpuprofile`), JSON.stringify(result.profile));
      session.post('Profiler.start');
    });
  process.on('SIGUSR2', write);
  process.on('exit', write);
}

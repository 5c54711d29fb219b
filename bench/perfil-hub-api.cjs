// CPU profile of hub-api inside a platform started by a benchmark (node --cpu-prof is refused in
// NODE_OPTIONS; a --require preload is not). Every service loads it; only hub-api
// (services/hub-api/dist/main.js) starts V8's sampling profiler, and writes the profile at exit
// (and on SIGUSR2) to BENCH_PROFILE_DIR (default /tmp), to open in Chrome DevTools or speedscope.
//   BENCH_ONLY_SATURATION=1 NODE_OPTIONS="--require ./bench/perfil-hub-api.cjs" npx tsx bench/publicar.ts
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const path = require('node:path');

if ((process.argv[1] ?? '').includes(path.join('hub-api', 'dist'))) {
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
        writeFileSync(path.join(dir, `hub-api-${process.pid}-${n++}.cpuprofile`), JSON.stringify(result.profile));
      session.post('Profiler.start');
    });
  process.on('SIGUSR2', write);
  process.on('exit', write);
}

import { Writable } from 'node:stream';
import { createLogger } from '@hub/log';
import { periodicJob } from './periodic';

/** A logger whose lines the test reads. */
function loggerEmMemoria() {
  const linhas: { level: number; msg: string; job?: string; err?: { message: string } }[] = [];
  const destino = new Writable({
    write(chunk, _encoding, done) {
      linhas.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: createLogger('teste', 'info', destino), linhas };
}

/** A run the test ends when it wants. */
function portao() {
  let abrir!: () => void;
  const aberto = new Promise<void>((resolve) => {
    abrir = resolve;
  });
  return { aberto, abrir };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('periodicJob', () => {
  test('When started, then it runs once a period by the clock, not at once', async () => {
    const { logger } = loggerEmMemoria();
    let runs = 0;
    const job = periodicJob({ name: 'teste', logger, everyMs: 1_000, run: async () => ++runs }).start();
    expect(runs).toBe(0);
    await jest.advanceTimersByTimeAsync(999);
    expect(runs).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(runs).toBe(1);
    await jest.advanceTimersByTimeAsync(3_000);
    expect(runs).toBe(4);
    await job.stop();
  });

  test('When runs take time, then everyMs spaces their starts and pauseMs the end of one from the start of the next', async () => {
    const { logger } = loggerEmMemoria();
    const inicios: Record<string, number[]> = { every: [], pause: [] };
    const t0 = Date.now();
    const demorada = (qual: string) => async () => {
      inicios[qual]!.push(Date.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 300));
    };
    const every = periodicJob({ name: 'every', logger, everyMs: 1_000, run: demorada('every') }).start();
    const pause = periodicJob({ name: 'pause', logger, pauseMs: 1_000, run: demorada('pause') }).start();
    await jest.advanceTimersByTimeAsync(3_700);
    expect(inicios.every).toEqual([1_000, 2_000, 3_000]);
    expect(inicios.pause).toEqual([1_000, 2_300, 3_600]);
    const parando = Promise.all([every.stop(), pause.stop()]);
    await jest.advanceTimersByTimeAsync(300);
    await parando;
  });

  test('When a run throws, then it is logged and the next run comes on time', async () => {
    const { logger, linhas } = loggerEmMemoria();
    let runs = 0;
    const job = periodicJob({
      name: 'teste',
      logger,
      pauseMs: 1_000,
      run: async () => {
        runs += 1;
        if (runs === 1) throw new Error('database down');
        return runs;
      },
    }).start();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(1);
    expect(linhas).toEqual([
      expect.objectContaining({ level: 50, job: 'teste', err: expect.objectContaining({ message: 'database down' }) }),
    ]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(2);
    await job.stop();
  });

  test('When stopped during a run, then stop resolves only after that run ends, and no run follows', async () => {
    const { logger } = loggerEmMemoria();
    const { aberto, abrir } = portao();
    let runs = 0;
    let terminadas = 0;
    const job = periodicJob({
      name: 'teste',
      logger,
      everyMs: 1_000,
      run: async (ctx) => {
        runs += 1;
        await aberto;
        expect(ctx.stopped).toBe(true);
        terminadas += 1;
      },
    }).start();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(1);
    let parou = false;
    const parando = job.stop().then(() => {
      parou = true;
    });
    await jest.advanceTimersByTimeAsync(5_000);
    expect(parou).toBe(false);
    abrir();
    await parando;
    expect(terminadas).toBe(1);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(1);
  });

  test('When stopped before its first run, then it never runs', async () => {
    const { logger } = loggerEmMemoria();
    let runs = 0;
    const job = periodicJob({ name: 'teste', logger, everyMs: 1_000, run: async () => ++runs }).start();
    await job.stop();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(0);
  });

  test('When runNow is called during a run, then the calls share one run after it, and its result', async () => {
    const { logger } = loggerEmMemoria();
    const portoes = [portao(), portao()];
    let runs = 0;
    const job = periodicJob({
      name: 'teste',
      logger,
      pauseMs: 60_000,
      run: async () => {
        const n = runs++;
        await portoes[n]!.aberto;
        return n;
      },
    });
    const primeira = job.runNow();
    const [segunda, terceira] = [job.runNow(), job.runNow()];
    expect(runs).toBe(1);
    portoes[0]!.abrir();
    expect(await primeira).toBe(0);
    portoes[1]!.abrir();
    expect(await Promise.all([segunda, terceira])).toEqual([1, 1]);
    expect(runs).toBe(2);
    await job.idle();
  });

  test('When runNow runs a run that throws, then its caller gets the error', async () => {
    const { logger, linhas } = loggerEmMemoria();
    const job = periodicJob({
      name: 'teste',
      logger,
      pauseMs: 1_000,
      run: async () => {
        throw new Error('boom');
      },
    });
    await expect(job.runNow()).rejects.toThrow('boom');
    expect(linhas).toHaveLength(1);
  });
  test('When runNow is called after stop, then no run starts and it rejects at once, saying so', async () => {
    const { logger } = loggerEmMemoria();
    let runs = 0;
    const job = periodicJob({ name: 'teste', logger, pauseMs: 1_000, run: async () => ++runs });
    expect(await job.runNow()).toBe(1);
    await job.stop();
    await expect(job.runNow()).rejects.toThrow('teste: the job is stopped; runNow() starts no run');
    await job.idle();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(1);
  });
});

describe('periodicJob.wake', () => {
  test('When woken, then it runs now without the caller waiting, and once stopped a wake runs nothing', async () => {
    const { logger, linhas } = loggerEmMemoria();
    let runs = 0;
    const job = periodicJob({
      name: 'teste',
      logger,
      everyMs: 60_000,
      run: async () => {
        runs += 1;
        throw new Error('falhou');
      },
    });
    job.wake();
    await job.idle();
    expect([runs, linhas.length]).toEqual([1, 1]);
    await job.stop();
    job.wake();
    await job.idle();
    expect(runs).toBe(1);
  });
});

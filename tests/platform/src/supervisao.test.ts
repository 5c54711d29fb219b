import { waitFor } from '@hub/testing';
import { Child, type Exit, Supervised } from '../../../infra/scripts/lib/processes.mjs';

/** A process like a service that dies: says a line, then exits 1 after `ms`. */
const morre = (ms: number) => () =>
  new Child({
    name: 'fragil',
    args: ['-e', `console.log('{"level":50,"msg":"ECONNREFUSED"}'); setTimeout(() => process.exit(1), ${ms})`],
    cwd: process.cwd(),
    env: process.env,
    index: 0,
    width: 6,
  });

test('When a service that was ready exits, then pnpm start runs it again after a pause that doubles, logging each restart, until it is stopped', async () => {
  const ditos: string[] = [];
  const falhas: Exit[] = [];
  const servico = new Supervised({
    name: 'fragil',
    start: morre(50),
    say: (text) => ditos.push(text),
    onFailedStart: (exit) => falhas.push(exit),
    firstDelayMs: 50,
    maxDelayMs: 200,
  });
  servico.markReady();
  await waitFor(() => servico.restarts >= 4, { timeoutMs: 20_000, what: 'four restarts' });
  await servico.stop(1_000);
  const restarts = servico.restarts;

  expect(falhas).toEqual([]);
  expect(ditos.slice(0, 4).map((d) => d.split('\n')[0])).toEqual([
    '✗ fragil exited unexpectedly (code 1); restarting in 0.05 s (restart 1)',
    '✗ fragil exited unexpectedly (code 1); restarting in 0.1 s (restart 2)',
    '✗ fragil exited unexpectedly (code 1); restarting in 0.2 s (restart 3)',
    '✗ fragil exited unexpectedly (code 1); restarting in 0.2 s (restart 4)',
  ]);
  // Each restart shows the last lines of the process that died.
  expect(ditos[0]).toContain('ECONNREFUSED');
  // Stopped: nothing is started again.
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect(servico.restarts).toBe(restarts);
  expect(servico.running).toBe(false);
}, 30_000);

test('When a service exits before it was ever ready, then it is not restarted and the failure is reported', async () => {
  const ditos: string[] = [];
  const falha = new Promise<Exit>((resolve) => {
    new Supervised({ name: 'fragil', start: morre(0), say: (text) => ditos.push(text), onFailedStart: resolve });
  });
  expect(await falha).toEqual({ code: 1, signal: null });
  expect(ditos).toEqual([]);
});

test('When a restarted service answers its readiness again, then pnpm start says it is back and how long it was away', async () => {
  const ditos: string[] = [];
  let lancamentos = 0;
  const vive = () =>
    new Child({
      name: 'fragil',
      args: ['-e', 'setTimeout(() => undefined, 60_000)'],
      cwd: process.cwd(),
      env: process.env,
      index: 0,
      width: 6,
    });
  const servico = new Supervised({
    name: 'fragil',
    start: () => (++lancamentos === 1 ? morre(50)() : vive()),
    say: (text) => ditos.push(text),
    onFailedStart: () => undefined,
    waitReady: async () => undefined,
    firstDelayMs: 50,
  });
  servico.markReady();
  try {
    await waitFor(() => ditos.some((d) => d.startsWith('✓')), { timeoutMs: 20_000, what: 'the service back' });
    expect(ditos.map((d) => (d.split('\n')[0] ?? '').replace(/[\d.]+ s after/, 'N s after'))).toEqual([
      '✗ fragil exited unexpectedly (code 1); restarting in 0.05 s (restart 1)',
      '✓ fragil ready again (restart 1, N s after it exited)',
    ]);
  } finally {
    await servico.stop(1_000);
  }
}, 30_000);

import { writeFile } from 'node:fs/promises';
import { api, closeConnections, sendRaw } from './http-client';
import { type Platform, startPlatform } from './platform';
import { DatabaseFingerprints } from './sweep/fingerprint';
import { type Callers, createFixtures } from './sweep/fixtures';
import { type OpenApiDocument, type Operation, operationsOf } from './sweep/operations';
import { type Accepted, groupViolations, judge, type SweepContext, sweepOperation, type Violation } from './sweep/run';
import type { Fixtures } from './sweep/valid-input';

/**
 * The hostile-input sweep: every operation of the gateway's merged OpenAPI document, so a route is
 * covered the day it is documented. SWEEP_SEED replays a run (printed with any failure); SWEEP_RUNS
 * samples each kind more than once; SWEEP_REPORT=<file> writes every violation as JSON.
 */
const SEED = Number(process.env.SWEEP_SEED ?? 20261123);
const RUNS = Number(process.env.SWEEP_RUNS ?? 1);

let platform: Platform;
let document: OpenApiDocument;
let fixtures: Fixtures;
let callers: Callers;
let fingerprints: DatabaseFingerprints;

beforeAll(async () => {
  platform = await startPlatform({
    // The worker attempts and retries the deliveries of the sweep's accepted publications in the
    // background (to addresses that do not answer), rewriting entrega, tentativa and the tallies at
    // any moment: the sweep asks what a request changed, so deliveries stay pendente.
    deliveryWorker: false,
    env: {
      // The sweep is one caller sending thousands of requests: it must not be throttled.
      gateway: {
        RATE_LIMIT_PER_MINUTE: '10000000',
        RATE_LIMIT_USER_PER_MINUTE: '10000000',
        RATE_LIMIT_APPLICATION_PER_MINUTE: '10000000',
      },
      // Logging in stamps ultimo_login_em; within a day it is stamped once, before the fingerprints.
      access: { ACCESS_LOGIN_TOUCH_INTERVAL: '1d' },
      // Nor by hub-api's budgets of an application's replays (10 a minute) and of its own subscriptions
      // (every hostile value must reach validation).
      'hub-api': {
        HUB_REPRODUCOES_POR_MINUTO: '1000000',
        HUB_ALTERACOES_DE_ASSINATURAS_POR_MINUTO: '10000000',
        HUB_ASSINATURAS_POR_APLICATIVO: '100000',
      },
    },
  });
  const response = await api<OpenApiDocument>(platform.gatewayUrl, undefined, 'GET', '/openapi.json');
  document = response.body;
  ({ fixtures, callers } = await createFixtures(platform, document));
  fingerprints = await DatabaseFingerprints.open(platform.databases);
}, 180_000);

afterAll(async () => {
  await fingerprints?.close();
  closeConnections();
  if (platform) {
    const codes = await platform.stop();
    // A service that cannot stop cleanly after the sweep is a finding too; say so here, where it shows.
    for (const [name, code] of Object.entries(codes)) if (code !== 0) console.warn(`${name} exited with ${code}`);
  }
}, 60_000);

/** Application routes (/eventos, and the subscriber's /entregas, /assinaturas and /tipos-de-evento) take an application token; the rest a master's. */
const APLICATIVO = /^\/(eventos|entregas|assinaturas|tipos-de-evento)(\/|$)/;
const tokenFor = (operation: Operation) =>
  !operation.authenticated ? undefined : APLICATIVO.test(operation.path) ? callers.application : callers.master;

test('When hostile values reach every query parameter, path parameter and body field of every documented operation, then no answer is a 5xx, slow or a bare 4xx, and a refused request changes nothing', async () => {
  const operations = operationsOf(document);
  expect(operations.length).toBeGreaterThan(40);
  const context: SweepContext = {
    baseUrl: platform.gatewayUrl,
    fixtures,
    tokenFor,
    fingerprints,
    seed: SEED,
    runs: RUNS,
  };
  const violations: Violation[] = [];
  const accepted: Accepted[] = [];
  for (const operation of operations) {
    const result = await sweepOperation(operation, context);
    violations.push(...result.violations);
    accepted.push(...result.accepted);
  }

  if (process.env.SWEEP_REPORT)
    await writeFile(process.env.SWEEP_REPORT, JSON.stringify({ seed: SEED, violations, accepted }, null, 1));
  const report = groupViolations(violations);
  expect(report.length ? [`SWEEP_SEED=${SEED} SWEEP_RUNS=${RUNS} replays these:`, ...report] : []).toEqual([]);
}, 300_000);

test.each([
  ['a 20 KB URL', 20_000, 'url'],
  ['a 100 KB URL', 100_000, 'url'],
  ['a 20 KB header', 20_000, 'header'],
  ['a 100 KB header', 100_000, 'header'],
] as const)(
  'When a request with %s reaches the gateway, then it answers 431 problem+json',
  async (_name, size, where) => {
    const response = await sendRaw(platform.gatewayUrl, {
      method: 'GET',
      path: where === 'url' ? `/funcao?busca=${'a'.repeat(size)}` : '/funcao',
      headers: {
        authorization: `Bearer ${callers.master}`,
        ...(where === 'header' ? { 'x-varredura': 'a'.repeat(size) } : {}),
      },
    });
    expect({ status: response.status, error: response.error, problem: judge(response) }).toEqual({
      status: 431,
      error: undefined,
      problem: undefined,
    });
  },
);

test('When the sweep is over, then every service is still running and ready', async () => {
  const states = await Promise.all(
    platform.services.map(async (name) => {
      const response = await sendRaw(platform.urls[name], { method: 'GET', path: '/saude/prontidao' });
      return [name, response.status] as const;
    }),
  );
  expect(Object.fromEntries(states)).toEqual(Object.fromEntries(platform.services.map((name) => [name, 200])));
});

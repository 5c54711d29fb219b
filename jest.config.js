/**
 * One jest run for the whole workspace, in two projects (docs/development.md, "Tests"):
 * - `unit`: `*.unit.test.ts`, pure rules and files, no PostgreSQL and no RabbitMQ. No global set-up;
 *   the broker and database URLs point at a closed port, so a unit test that reaches either fails.
 *   `npx jest --selectProjects unit` runs on a machine with neither.
 * - `integration`: every other `*.test.ts`, against the real PostgreSQL and RabbitMQ, but for the
 *   fault scenarios, which `pnpm test:faults` runs (HUB_TEST_FAULTS=1, the integration project alone):
 *   `tests/platform/src/falhas/` (PostgreSQL, RabbitMQ and Patroni clusters of their own, killed under
 *   bursts) and each package's own `falhas.test.ts` and `*resiliencia.test.ts` (a private PostgreSQL
 *   stopped, restarted or hung, RabbitMQ cut, a worker killed -9 mid-batch).
 */
const FAULTS = ['/tests/platform/src/falhas/', '/src/falhas\\.test\\.ts$', '/src/[^/]*resiliencia\\.test\\.ts$'];
const faults = process.env.HUB_TEST_FAULTS === '1';
const shared = {
  testEnvironment: 'node',
  rootDir: __dirname,
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/tests'],
  transform: {
    '^.+\\.(ts|js|mjs)$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
      },
    ],
  },
  // jose and postgrator ship ES modules only; jest runs CommonJS, so swc converts them too.
  transformIgnorePatterns: ['/node_modules/\\.pnpm/(?!(jose|postgrator)@)'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['**/src/**/*.unit.test.ts'],
      setupFiles: ['<rootDir>/infra/test/setup-unit-env.js'],
    },
    {
      ...shared,
      displayName: 'integration',
      ...(faults
        ? { testRegex: FAULTS.map((pattern) => `${pattern}${pattern.endsWith('/') ? '.*\\.test\\.ts$' : ''}`) }
        : { testMatch: ['**/src/**/*.test.ts'] }),
      testPathIgnorePatterns: ['/node_modules/', '\\.unit\\.test\\.ts$', ...(faults ? [] : FAULTS)],
      globalSetup: '<rootDir>/infra/test/global-setup.js',
      setupFiles: ['<rootDir>/infra/test/setup-env.js'],
    },
  ],
  testTimeout: 30_000,
  // Three files at once on two vCPUs: most files wait on the services they start, PostgreSQL and
  // RabbitMQ; with three, `pnpm test` took 438 s instead of 600 on Node 20, each file about as long as
  // with two, the CPU still idle 13 % of the run (docs/development.md, "Where the test time goes").
  // The fault scenarios kill servers under bursts and time their recovery: two at once, as before.
  maxWorkers: faults ? 2 : 3,
  reporters: ['default', '<rootDir>/infra/test/slowest-files.reporter.js'],
};

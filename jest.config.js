/** One jest run for the whole workspace. Tests talk to the real PostgreSQL and RabbitMQ. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/tests'],
  testMatch: ['**/src/**/*.test.ts'],
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
  globalSetup: '<rootDir>/infra/test/global-setup.js',
  setupFiles: ['<rootDir>/infra/test/setup-env.js'],
  testTimeout: 30_000,
  maxWorkers: 2,
};

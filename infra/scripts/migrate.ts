// `pnpm migrate`: creates and migrates every service's database without starting the services
// (they also do this themselves at start). Database URLs come from the same variables the
// services read, with the same defaults.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ensureDatabase, migrate } from '../../packages/database/src';

const root = path.resolve(__dirname, '../..');
const DATABASES = [
  { service: 'access', variable: 'ACCESS_DATABASE_URL', database: 'hub_access' },
  { service: 'function', variable: 'FUNCTION_DATABASE_URL', database: 'hub_function' },
  { service: 'hub-api', variable: 'HUB_DATABASE_URL', database: 'hub_events' },
];

async function main() {
  for (const { service, variable, database } of DATABASES) {
    const dir = path.join(root, 'services', service, 'migrations');
    if (!existsSync(dir)) {
      process.stdout.write(`· ${service}: no migrations folder yet\n`);
      continue;
    }
    const url = process.env[variable] ?? `postgresql://postgres@127.0.0.1:5432/${database}`;
    await ensureDatabase(url);
    const applied = await migrate(url, dir);
    process.stdout.write(
      `✓ ${service}: ${new URL(url).pathname.slice(1)} up to date (${applied} migration${applied === 1 ? '' : 's'} applied)\n`,
    );
  }
}

main().catch((error) => {
  process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

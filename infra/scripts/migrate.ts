// `pnpm migrate`: creates and migrates every service's database without starting the services
// (they also do this themselves at start). Database URLs come from the same variables the
// services read, with the same defaults.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ensureDatabase, migrate } from '../../packages/database/src';

const root = path.resolve(__dirname, '../..');
const DATABASES = [
  { owner: 'services/access', variable: 'ACCESS_DATABASE_URL', database: 'hub_access' },
  { owner: 'services/function', variable: 'FUNCTION_DATABASE_URL', database: 'hub_function' },
  // hub-api and the delivery worker share hub_events; its migrations live in @hub/hub-data
  { owner: 'packages/hub-data', variable: 'HUB_DATABASE_URL', database: 'hub_events' },
];

async function main() {
  for (const { owner, variable, database } of DATABASES) {
    const dir = path.join(root, owner, 'migrations');
    if (!existsSync(dir)) {
      process.stdout.write(`· ${owner}: no migrations folder yet\n`);
      continue;
    }
    const url = process.env[variable] ?? `postgresql://postgres@127.0.0.1:5432/${database}`;
    await ensureDatabase(url);
    const applied = await migrate(url, dir);
    process.stdout.write(
      `✓ ${owner}: ${new URL(url).pathname.slice(1)} up to date (${applied} migration${applied === 1 ? '' : 's'} applied)\n`,
    );
  }
}

main().catch((error) => {
  process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

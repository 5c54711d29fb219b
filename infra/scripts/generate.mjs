// Generates the Prisma client of every service that has a prisma/schema.prisma.
// `prisma generate` runs on WASM; PRISMA_SCHEMA_ENGINE_BINARY only has to point somewhere, so that
// prisma never tries to download a native engine (the registries are all this machine reaches).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const prisma = path.join(root, 'node_modules/.bin/prisma');
for (const service of readdirSync(path.join(root, 'services'))) {
  const dir = path.join(root, 'services', service);
  if (!existsSync(path.join(dir, 'prisma/schema.prisma'))) continue;
  execFileSync(prisma, ['generate'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? '/bin/false',
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
    },
  });
  console.log(`prisma client generated for ${service}`);
}

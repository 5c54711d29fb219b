// Generates the Prisma client of every service and package that has a prisma/schema.prisma.
// `prisma generate` runs on WASM; PRISMA_SCHEMA_ENGINE_BINARY only has to point somewhere, so that
// prisma never tries to download a native engine (the registries are all this machine reaches).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const prisma = path.join(root, 'node_modules/.bin/prisma');
const owners = ['services', 'packages'].flatMap((folder) =>
  readdirSync(path.join(root, folder)).map((name) => path.join(folder, name)),
);
for (const owner of owners) {
  const dir = path.join(root, owner);
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
  console.log(`prisma client generated for ${owner}`);
}

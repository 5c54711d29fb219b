// `pnpm --filter @hub/client build` (and prepack): src/*.ts → dist/*.js (ESM, esbuild, one
// file per module, openapi-fetch left as an import) and dist/*.d.ts (tsc --emitDeclarationOnly).
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';

const dir = import.meta.dirname;
const sources = readdirSync(path.join(dir, 'src'))
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => path.join(dir, 'src', file));

rmSync(path.join(dir, 'dist'), { recursive: true, force: true });
await build({
  entryPoints: sources,
  outdir: path.join(dir, 'dist'),
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  bundle: false,
  logLevel: 'warning',
});
// The workspace's TypeScript (a root devDependency), found the way Node finds packages.
const tsc = path.join(path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: dir,
  stdio: 'inherit',
});

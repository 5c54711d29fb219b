import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const BUNDLES = path.join(ROOT, '.data', 'test-bundles');
/** What a bundle is made of besides the workspace's sources: dependencies and the build itself. */
const ALSO = ['pnpm-lock.yaml', 'tsconfig.json', 'infra/scripts/build.mjs'];

/**
 * The command line that runs a service as `pnpm start` runs it: node on its esbuild bundle
 * (infra/scripts/build.mjs), with source maps for stack traces. A test of services started as
 * processes gets the production artefact, and each start costs a third of the CPU of node with the
 * tsx loader compiling the service's modules (hub-api: 0.95 s against 2.5 s), which the suite paid
 * at every platform start. The bundle is made on first use and kept under .data/test-bundles/, named
 * by the state of the sources, so a changed file makes a new one and a run reuses the last.
 */
export function serviceCommand(name: string): string[] {
  return ['--enable-source-maps', bundleOf(name)];
}

/** services/<name>/src/main.ts → <name>; undefined for any other entry (a test's own script). */
export function serviceOfMain(file: string): string | undefined {
  const match = /^services\/([^/]+)\/src\/main\.ts$/.exec(path.relative(ROOT, path.resolve(ROOT, file)));
  return match?.[1];
}

let estado: string | undefined;

/** A name for the sources as they are: every file's path, size and modification time (tests' aside). */
function estadoDasFontes(): string {
  if (estado) return estado;
  const hash = createHash('sha256');
  const visitar = (dir: string) => {
    for (const entrada of readdirSync(dir, { withFileTypes: true })) {
      // Prisma's generated clients are rewritten by every `pnpm generate`: their schema stands for them.
      if (['node_modules', 'dist', 'generated'].includes(entrada.name)) continue;
      const caminho = path.join(dir, entrada.name);
      if (entrada.isDirectory()) visitar(caminho);
      else if (!/\.test(-support)?\.ts$/.test(entrada.name)) {
        const { size, mtimeMs } = statSync(caminho);
        hash.update(`${caminho}\0${size}\0${mtimeMs}\n`);
      }
    }
  };
  for (const raiz of ['services', 'packages'])
    for (const pacote of readdirSync(path.join(ROOT, raiz))) {
      for (const parte of ['src', 'prisma', 'migrations']) {
        const dir = path.join(ROOT, raiz, pacote, parte);
        if (existsSync(dir)) visitar(dir);
      }
      const manifesto = path.join(ROOT, raiz, pacote, 'package.json');
      if (existsSync(manifesto)) hash.update(`${manifesto}\0${statSync(manifesto).mtimeMs}\n`);
    }
  for (const arquivo of ALSO) hash.update(`${arquivo}\0${statSync(path.join(ROOT, arquivo)).mtimeMs}\n`);
  estado = hash.digest('hex').slice(0, 16);
  return estado;
}

/**
 * The service's bundle for the sources as they are, built when missing. Test files in two jest
 * workers may build the same one at once: each builds in a folder of its own and renames it into
 * place, and the one that finds it there already keeps that one.
 */
function bundleOf(name: string): string {
  const dir = path.join(BUNDLES, estadoDasFontes(), name);
  const main = path.join(dir, 'main.js');
  if (existsSync(main)) return main;
  const tmp = `${dir}.${process.pid}.${Date.now()}`;
  mkdirSync(path.dirname(dir), { recursive: true });
  execFileSync(process.execPath, [path.join(ROOT, 'infra/scripts/build.mjs'), name, '--outdir', tmp], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    renameSync(tmp, dir);
  } catch {
    rmSync(tmp, { recursive: true, force: true });
  }
  esquecerAntigos();
  return main;
}

/** Bundles of earlier states of the sources are removed (best effort: another run may use one). */
function esquecerAntigos(): void {
  for (const antigo of readdirSync(BUNDLES))
    if (antigo !== estado && statSync(path.join(BUNDLES, antigo)).mtimeMs < Date.now() - 3_600_000)
      rmSync(path.join(BUNDLES, antigo), { recursive: true, force: true });
}

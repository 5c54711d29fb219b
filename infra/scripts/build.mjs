// `pnpm build`: bundles each service (services/<name>/src/main.ts → services/<name>/dist/main.js) with
// esbuild, so that production runs plain node on compiled JavaScript instead of tsx compiling at start
// (about half the memory at idle: docs/benchmarks.md). The Prisma clients must be generated first
// (`pnpm generate`, which `pnpm build` runs). `node infra/scripts/build.mjs <service>…` builds only
// those; `--outdir <dir>` (one service) writes the bundle elsewhere, e.g. for a test.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * Workspace code finds files beside it at run time (SQL migrations, the outbox DDL) through
 * `__dirname`. In a bundle `__dirname` is the bundle's folder, so each workspace file gets its own
 * folder back, relative to the bundle: it works wherever the tree is, as long as it is whole.
 */
const sourceDirname = (outdir) => ({
  name: 'source-dirname',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?ts$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const contents = await readFile(args.path, 'utf8');
      if (!contents.includes('__dirname')) return undefined;
      const relative = path.relative(outdir, path.dirname(args.path)).split(path.sep).join('/');
      return {
        contents: contents.replace(
          /\b__dirname\b/g,
          `require('node:path').join(__dirname, ${JSON.stringify(relative)})`,
        ),
        loader: 'ts',
      };
    });
  },
});

/**
 * OpenTelemetry's instrumentations of express and pg patch those packages as Node's `require` loads
 * them (docs/decisions/tracing.md); bundled, they would never be required and
 * never patched. So they stay outside the bundle: each import of them becomes a require of the file
 * it resolved to, relative to the bundle (like `sourceDirname`, the tree must be whole).
 */
export const INSTRUMENTED = ['express', 'pg'];
const instrumentedOutside = (outdir) => ({
  name: 'instrumented-outside',
  setup(build) {
    const filter = new RegExp(`^(${INSTRUMENTED.join('|')})$`);
    build.onResolve({ filter }, async (args) => {
      if (args.pluginData?.outside) return undefined;
      const resolved = await build.resolve(args.path, {
        resolveDir: args.resolveDir,
        // Node's require loads them (the bundle is CommonJS): their CommonJS entry, not an ESM one.
        kind: 'require-call',
        importer: args.importer,
        pluginData: { outside: true },
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      const relative = path.relative(outdir, resolved.path).split(path.sep).join('/');
      return { path: relative.startsWith('.') ? relative : `./${relative}`, external: true };
    });
  },
});

/**
 * Prisma 7 compiles its queries with a 3.4 MB WebAssembly module. On the first query V8's dynamic
 * tiering recompiles most of it with TurboFan, and the compiler's memory stays in the process:
 * about 100 MB more RSS for good. A budget 50 times V8's default keeps the start-up queries on the
 * baseline compiler (Prisma caches query plans, so the module runs rarely); functions that are
 * really hot still tier up. Set before anything compiles WebAssembly, which is why it is the first
 * line of the bundle. Figures: docs/benchmarks.md.
 */
const WASM_TIERING = "require('node:v8').setFlagsFromString('--wasm-tiering-budget=100000000');";

export function services() {
  return readdirSync(path.join(root, 'services')).filter((name) =>
    existsSync(path.join(root, 'services', name, 'src', 'main.ts')),
  );
}

/**
 * Test code (docs/development.md, "Tests"): tests, their `*.test-support.ts` helpers and @hub/testing.
 * A production bundle that reaches any of it fails to build.
 */
export const isTestCode = (input) => /\.test(-support)?\.ts$|(^|\/)packages\/testing\//.test(input);

/**
 * Bundles one service into `outdir` (its dist/ by default); returns the bundle's path. A refused
 * bundle (test code in it) is never written: esbuild builds in memory, and the files are written
 * once the bundle is accepted.
 */
export async function buildService(name, outdir = path.join(root, 'services', name, 'dist')) {
  const dir = path.join(root, 'services', name);
  const { metafile, outputFiles } = await build({
    entryPoints: [path.join(dir, 'src', 'main.ts')],
    outfile: path.join(outdir, 'main.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: true,
    // Stack traces need the map's file names and positions, not the sources' text.
    sourcesContent: false,
    // Optional native bindings that the libraries try and do without (pg's pg-native).
    external: ['pg-native'],
    banner: { js: WASM_TIERING },
    logLevel: 'warning',
    absWorkingDir: root,
    tsconfig: path.join(root, 'tsconfig.json'),
    plugins: [sourceDirname(outdir), instrumentedOutside(outdir)],
    metafile: true,
    write: false,
  });
  const testCode = Object.keys(metafile.inputs).filter(isTestCode);
  if (testCode.length) throw new Error(`the bundle of ${name} holds test code: ${testCode.join(', ')}`);
  await mkdir(outdir, { recursive: true });
  await Promise.all(outputFiles.map((file) => writeFile(file.path, file.contents)));
  return path.join(outdir, 'main.js');
}

const PANEL_DIR = path.join(root, 'services', 'panel');

/**
 * Builds the panel (services/panel, Vite) into services/panel/dist, which the gateway serves at
 * /painel/. Resolves to the output Vite printed (file sizes, gzipped too).
 */
export async function buildPanel() {
  const vite = path.join(PANEL_DIR, 'node_modules', 'vite', 'bin', 'vite.js');
  const { stdout } = await promisify(execFile)(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
    cwd: PANEL_DIR,
    env: { ...process.env, NODE_ENV: 'production', NO_COLOR: '1' },
  });
  return stdout;
}

async function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf('--outdir');
  const outdir = at >= 0 ? path.resolve(args.splice(at, 2)[1] ?? '') : undefined;
  const names = args.length ? args : services();
  const unknown = args.filter((name) => !services().includes(name));
  if (unknown.length) throw new Error(`no such service: ${unknown.join(', ')}`);
  if (outdir && names.length !== 1) throw new Error('--outdir takes exactly one service');
  const started = Date.now();
  // The panel is static files, not a service: built with the whole set, not with --outdir.
  const panel = args.length === 0 ? buildPanel() : Promise.resolve(undefined);
  await Promise.all([...names.map((name) => buildService(name, outdir)), panel]);
  console.log(`built ${names.join(', ')}${args.length === 0 ? ' and the panel' : ''} in ${Date.now() - started} ms`);
}

if (process.argv[1] === import.meta.filename) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}

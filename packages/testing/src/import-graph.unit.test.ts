import { readFileSync } from 'node:fs';
import path from 'node:path';
import { importsOf } from './imports';
import { WORKSPACE_ROOT, workspaceDirs, workspaceSources } from './workspace';

/**
 * Services meet over HTTP and RabbitMQ only. In code that means: a service (its tests too) uses another
 * service only through that service's public entry (package.json `main`/`exports`), never its src/;
 * a package never uses a service; and the workspace dependencies have no cycle. And test support stays
 * out of production code: no file but a test, a test-support file or @hub/testing imports one (so no
 * main entry re-exports a `startXForTests`; tests take it from the `./testing` or `./test-support` export).
 */

interface Workspace {
  /** directory relative to the root (services/x, packages/y) -> package.json */
  manifests: Map<string, { name: string; exports?: unknown; dependencies?: object; devDependencies?: object }>;
  /** file relative to the root -> its text */
  files: Map<string, string>;
}

const isService = (dir: string) => dir.startsWith('services/');
/** Tests and their support files: the only code of a service that may start another one. */
const isTestCode = (file: string) => /\.test\.ts$|\.test-support\.ts$/.test(file);
/** @hub/testing is test code as a whole. */
const isTestPackage = (dir: string) => dir === 'packages/testing';
/** What only tests may import: a test or test-support file, @hub/testing, a package's test-support export. */
const isTestSupport = (specifier: string) =>
  /\.test(-support)?(\.ts)?$/.test(specifier) ||
  /^@hub\/testing(\/|$)|^@hub\/[^/]+\/(testing|test-support)$/.test(specifier);

/** Subpaths a package declares public besides its main entry (`exports` keys like "./verify"). */
function publicSubpaths(exports: unknown): string[] {
  if (!exports || typeof exports !== 'object') return [];
  return Object.keys(exports).filter((key) => key.startsWith('./') && key !== './package.json');
}

export function violations(workspace: Workspace): string[] {
  const byName = new Map([...workspace.manifests].map(([dir, manifest]) => [manifest.name, dir]));
  const found: string[] = [];
  for (const [file, text] of workspace.files) {
    const ownDir = [...workspace.manifests.keys()].find((dir) => file.startsWith(`${dir}/`));
    if (!ownDir) continue;
    for (const specifier of importsOf(text)) {
      if (isTestSupport(specifier) && !isTestCode(file) && !isTestPackage(ownDir)) {
        found.push(`${file}: production code imports test support ('${specifier}'); tests import it themselves`);
        continue;
      }
      let targetDir: string | undefined;
      let subpath = '';
      if (specifier.startsWith('.')) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
        targetDir = [...workspace.manifests.keys()].find((dir) => target === dir || target.startsWith(`${dir}/`));
        if (targetDir && targetDir !== ownDir) subpath = `./${path.posix.relative(targetDir, target)}`;
      } else {
        const name = [...byName.keys()].find((n) => specifier === n || specifier.startsWith(`${n}/`));
        if (name) {
          targetDir = byName.get(name);
          subpath = specifier === name ? '' : `.${specifier.slice(name.length)}`;
        }
      }
      if (!targetDir || targetDir === ownDir || !isService(targetDir)) {
        if (targetDir && targetDir !== ownDir && specifier.startsWith('.')) {
          found.push(`${file}: '${specifier}' reaches into ${targetDir} by path instead of its package name`);
        }
        continue;
      }
      if (!isService(ownDir)) {
        found.push(`${file}: the package ${ownDir} imports the service ${targetDir} ('${specifier}')`);
      } else if (specifier.startsWith('.')) {
        found.push(`${file}: '${specifier}' reaches into the source of ${targetDir}`);
      } else if (!isTestCode(file)) {
        found.push(`${file}: running code imports the service ${targetDir} ('${specifier}'); call it over HTTP`);
      } else if (subpath && !publicSubpaths(workspace.manifests.get(targetDir)!.exports).includes(subpath)) {
        found.push(`${file}: '${specifier}' reaches past the public entry of ${targetDir}`);
      }
    }
  }
  for (const [dir, manifest] of workspace.manifests) {
    // A service may start another in its tests (devDependencies), never at run time.
    const declared = isService(dir) ? manifest.dependencies : { ...manifest.dependencies, ...manifest.devDependencies };
    for (const dependency of Object.keys(declared ?? {})) {
      const target = byName.get(dependency);
      if (target && isService(target)) {
        found.push(
          `${dir}/package.json: ${isService(dir) ? 'the service' : 'the package'} depends on the service ${target}`,
        );
      }
    }
  }
  return [...found, ...dependencyCycles(workspace)];
}

function dependencyCycles(workspace: Workspace): string[] {
  const names = new Set([...workspace.manifests.values()].map((m) => m.name));
  const edges = new Map(
    [...workspace.manifests.values()].map((m) => [
      m.name,
      Object.keys({ ...m.dependencies, ...m.devDependencies }).filter((d) => names.has(d)),
    ]),
  );
  const cycles: string[] = [];
  const done = new Set<string>();
  const visit = (name: string, trail: string[]) => {
    if (trail.includes(name)) {
      cycles.push(`workspace dependency cycle: ${[...trail.slice(trail.indexOf(name)), name].join(' -> ')}`);
      return;
    }
    if (done.has(name)) return;
    for (const next of edges.get(name) ?? []) visit(next, [...trail, name]);
    done.add(name);
  };
  for (const name of names) visit(name, []);
  return cycles;
}

function readWorkspace(): Workspace {
  const manifests: Workspace['manifests'] = new Map(
    workspaceDirs().map((dir) => [
      dir,
      JSON.parse(readFileSync(path.join(WORKSPACE_ROOT, dir, 'package.json'), 'utf8')),
    ]),
  );
  const files = workspaceSources();
  // This file's own examples of forbidden imports are not imports.
  files.delete(path.relative(WORKSPACE_ROOT, __filename).split(path.sep).join('/'));
  return { manifests, files };
}

describe('the import graph', () => {
  it('When every source and test file of the workspace is read, then services meet only through public entries, packages import no service, and no dependency cycle exists', () => {
    const workspace = readWorkspace();
    expect(workspace.files.size).toBeGreaterThan(100);
    expect(violations(workspace)).toEqual([]);
  });

  describe('its rules', () => {
    const manifests: Workspace['manifests'] = new Map([
      ['services/access', { name: '@hub/access', exports: { '.': './src/index.ts', './testing': './src/t.ts' } }],
      ['services/hub-api', { name: '@hub/hub-api', devDependencies: { '@hub/access': 'workspace:*' } }],
      ['packages/signing', { name: '@hub/signing', exports: { '.': './src/index.ts', './verify': './src/verify.ts' } }],
      ['packages/testing', { name: '@hub/testing' }],
    ]);
    const check = (file: string, text: string) => violations({ manifests, files: new Map([[file, text]]) });

    it('When a service imports another service through its public entry, then it passes', () => {
      expect(
        check('services/hub-api/src/a.test.ts', "import { startAccessForTests } from '@hub/access/testing';"),
      ).toEqual([]);
      expect(check('services/access/src/a.ts', "import { verifyWebhook } from '@hub/signing/verify';")).toEqual([]);
    });

    it.each([
      ["import { startAccessForTests, type TestAccess } from '@hub/access/src/testing';", /public entry/],
      ["import {\n  startAccessForTests,\n} from '../../../access/src/testing';", /source of services\/access/],
      ["const { createApp } = require('@hub/access/src/app');", /public entry/],
      ["export * from '@hub/access/src/testing';", /public entry/],
      ["jest.mock('@hub/access/src/db');", /public entry/],
      ["import '../../../../packages/testing/src/wait';", /by path instead of its package name/],
    ])('When a hub-api test file holds %j, then it is reported', (text, problem) => {
      expect(check('services/hub-api/src/x/y.test.ts', text)).toEqual([expect.stringMatching(problem)]);
    });

    it.each([
      ['services/access/src/index.ts', "export { startAccessForTests } from './access.test-support';"],
      ['services/access/src/app.ts', "import { fixture } from './features/x/x.test';"],
      // (@hub/testing itself is not written here: the unit project's own check would read it as an import.)
      ['services/access/src/main.ts', "import { refusal } from '@hub/config/test-support';"],
      ['packages/signing/src/index.ts', "export * from '@hub/config/test-support';"],
      ['services/hub-api/src/features/x/x.service.ts', "import { startAccessForTests } from '@hub/access/testing';"],
    ])('When production code %s imports test support (%j), then it is reported', (file, text) => {
      expect(check(file, text)).toEqual([expect.stringMatching(/production code imports test support/)]);
    });

    it('When a test, a test-support file or @hub/testing imports test support, then it passes', () => {
      expect(check('services/access/src/x.test.ts', "import { a } from './access.test-support';")).toEqual([]);
      expect(check('services/access/src/y.test-support.ts', "import { b } from '@hub/config/test-support';")).toEqual(
        [],
      );
      expect(check('packages/testing/src/index.ts', "export * from '@hub/config/test-support';")).toEqual([]);
    });

    it('When the running code of a service imports another service, or lists it in dependencies, then it is reported', () => {
      expect(check('services/hub-api/src/features/x/x.service.ts', "import { createApp } from '@hub/access';")).toEqual(
        [expect.stringMatching(/running code imports the service services\/access/)],
      );
      const depending = new Map(manifests).set('services/hub-api', {
        name: '@hub/hub-api',
        dependencies: { '@hub/access': 'workspace:*' },
      });
      expect(violations({ manifests: depending, files: new Map() })).toEqual([
        expect.stringMatching(/services\/hub-api\/package.json: the service depends on the service services\/access/),
      ]);
    });

    it('When a package imports a service or depends on one, then it is reported', () => {
      expect(check('packages/testing/src/identity.ts', "import { createApp } from '@hub/access';")).toEqual([
        expect.stringMatching(/the package packages\/testing imports the service services\/access/),
      ]);
      const depending = new Map(manifests).set('packages/testing', {
        name: '@hub/testing',
        dependencies: { '@hub/access': 'workspace:*' },
      });
      expect(violations({ manifests: depending, files: new Map() })).toEqual([
        expect.stringMatching(/packages\/testing\/package.json: the package depends on the service services\/access/),
      ]);
    });

    it('When two workspace packages depend on each other, even as a devDependency, then the cycle is reported', () => {
      const cyclic: Workspace['manifests'] = new Map([
        ['packages/testing', { name: '@hub/testing', dependencies: { '@hub/signing': 'workspace:*' } }],
        ['packages/signing', { name: '@hub/signing', devDependencies: { '@hub/testing': 'workspace:*' } }],
      ]);
      expect(violations({ manifests: cyclic, files: new Map() })).toEqual([
        expect.stringMatching(/cycle: @hub\/testing -> @hub\/signing -> @hub\/testing/),
      ]);
    });
  });
});

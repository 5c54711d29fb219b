import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { importsOf } from './imports';

/**
 * jest.config.js runs `*.unit.test.ts` in the `unit` project, with no global set-up and the broker
 * and database at a closed port (infra/test/setup-unit-env.js). A unit test that reaches RabbitMQ
 * or PostgreSQL fails there; this test names the import that would take it there before it runs:
 * the test helpers that start or connect to them, and the drivers themselves. A `*.test-support.ts`
 * helper is followed like any file: one that needs neither (receptor.test-support.ts) may serve.
 */

const ROOT = path.resolve(__dirname, '../../..');

/** What a unit test and the files of its own package it loads may not import. */
const NEEDS_INFRASTRUCTURE: { pattern: RegExp; why: string }[] = [
  { pattern: /^@hub\/testing(\/|$)/, why: 'the test helpers start PostgreSQL databases, brokers and services' },
  { pattern: /^@hub\/database\/test-support$/, why: 'test databases live on the test PostgreSQL' },
  { pattern: /^pg$/, why: 'the PostgreSQL driver' },
  { pattern: /^amqplib$/, why: 'the RabbitMQ driver' },
];

/** Value imports only: `import type` loads nothing at run time. */
const valueImportsOf = (text: string) => importsOf(text.replace(/^\s*(import|export)\s+type\s[^;]*;/gm, ''));

interface Files {
  read(file: string): string;
  isFile(file: string): boolean;
}

const disk: Files = {
  read: (file) => readFileSync(file, 'utf8'),
  isFile: (file) => existsSync(file) && statSync(file).isFile(),
};

/** The forbidden imports a unit test reaches, through the files of its own package it loads. */
export function infrastructureReachedBy(testFile: string, files: Files = disk): string[] {
  const resolveLocal = (from: string, specifier: string) => {
    const base = path.resolve(path.dirname(from), specifier.replace(/\.js$/, ''));
    return [`${base}.ts`, path.join(base, 'index.ts')].find(files.isFile);
  };
  const found: string[] = [];
  const seen = new Set<string>();
  const visit = (file: string, trail: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of valueImportsOf(files.read(file))) {
      const rule = NEEDS_INFRASTRUCTURE.find((r) => r.pattern.test(specifier));
      const where = [...trail, path.relative(ROOT, file)].join(' -> ');
      if (rule) found.push(`${where} imports '${specifier}' (${rule.why})`);
      else if (specifier.startsWith('.')) {
        const target = resolveLocal(file, specifier);
        if (target) visit(target, [...trail, path.relative(ROOT, file)]);
      }
    }
  };
  visit(testFile, []);
  return found;
}

function unitTestFiles(): string[] {
  const files: string[] = [];
  for (const group of ['packages', 'services', 'tests']) {
    for (const entry of readdirSync(path.join(ROOT, group), { withFileTypes: true })) {
      const src = path.join(ROOT, group, entry.name, 'src');
      if (!entry.isDirectory() || !existsSync(src)) continue;
      for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
        // This file's own examples of forbidden imports are not imports.
        if (file.endsWith('.unit.test.ts') && path.join(src, file) !== __filename) files.push(path.join(src, file));
      }
    }
  }
  return files;
}

describe('the unit project', () => {
  it('When every *.unit.test.ts is read with the files of its package it loads, then none imports what needs PostgreSQL or RabbitMQ', () => {
    const files = unitTestFiles();
    expect(files.length).toBeGreaterThan(20);
    expect(files.flatMap((file) => infrastructureReachedBy(file))).toEqual([]);
  });

  it('When a unit test or a file it loads imports a test helper or a driver, then the chain is reported; type imports are not', () => {
    const at = (file: string) => path.join(ROOT, 'services/x/src', file);
    const tree: Record<string, string> = {
      [at('a.unit.test.ts')]:
        "import type { Contexto } from './contexto.test-support';\nimport { regra } from './regra';",
      [at('regra.ts')]: "import pg from 'pg';\nexport const regra = 1;",
      [at('b.unit.test.ts')]: "import { iniciarContexto } from './contexto.test-support';",
      [at('contexto.test-support.ts')]: "import { waitFor } from '@hub/testing';",
      [at('c.unit.test.ts')]: "import type { Connection } from 'amqplib';\nimport { regra } from './pura';",
      [at('pura.ts')]: 'export const regra = 1;',
    };
    const files = { read: (file: string) => tree[file]!, isFile: (file: string) => file in tree };
    expect(infrastructureReachedBy(at('a.unit.test.ts'), files)).toEqual([
      "services/x/src/a.unit.test.ts -> services/x/src/regra.ts imports 'pg' (the PostgreSQL driver)",
    ]);
    expect(infrastructureReachedBy(at('b.unit.test.ts'), files)).toEqual([
      "services/x/src/b.unit.test.ts -> services/x/src/contexto.test-support.ts imports '@hub/testing' (the test helpers start PostgreSQL databases, brokers and services)",
    ]);
    expect(infrastructureReachedBy(at('c.unit.test.ts'), files)).toEqual([]);
  });

  it('When jest.config.js is read, then the unit project has no global set-up and every test file belongs to exactly one project', () => {
    const config = require(path.join(ROOT, 'jest.config.js')) as {
      projects: { displayName: string; testMatch: string[]; testPathIgnorePatterns?: string[]; globalSetup?: string }[];
    };
    const unit = config.projects.find((p) => p.displayName === 'unit')!;
    const integration = config.projects.find((p) => p.displayName === 'integration')!;
    expect(unit.globalSetup).toBeUndefined();
    expect(unit.testMatch).toEqual(['**/src/**/*.unit.test.ts']);
    expect(integration.testMatch).toEqual(['**/src/**/*.test.ts']);
    const ignored = (file: string) => (integration.testPathIgnorePatterns ?? []).some((p) => new RegExp(p).test(file));
    expect(ignored('services/x/src/a.unit.test.ts')).toBe(true);
    expect(ignored('services/x/src/a.test.ts')).toBe(false);
  });
});

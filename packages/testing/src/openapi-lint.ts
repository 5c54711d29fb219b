import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const REDOCLY = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

export interface OpenApiLint {
  errors: number;
  warnings: number;
  /** One line per problem: `rule at #/pointer: message`. */
  problems: string[];
}

interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer?: string }[] }[];
}

/**
 * `redocly lint` of a document with the repository's redocly.yaml (Redocly's recommended rules),
 * run by the node running the caller; every problem is reported, none is hidden.
 */
export async function lintOpenApi(document: object): Promise<OpenApiLint> {
  const dir = await mkdtemp(path.join(tmpdir(), 'openapi-lint-'));
  const file = path.join(dir, 'openapi.json');
  try {
    await writeFile(file, JSON.stringify(document, null, 2));
    const args = [REDOCLY, 'lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format=json'];
    // Exit code 1 means errors were found: the report says which.
    const { stdout } = await run(process.execPath, [...args, '--max-problems=1000'], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { code?: number; stdout?: string }) => {
      if (error.code === 1 && error.stdout) return { stdout: error.stdout };
      throw error;
    });
    const report = JSON.parse(stdout) as RedoclyReport;
    return {
      errors: report.totals.errors,
      warnings: report.totals.warnings,
      problems: report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Platform, startPlatform } from '@hub/platform-tests';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..');
const TSX = path.resolve(ROOT, '../../node_modules/.bin/tsx');
const TYPES = path.join(ROOT, 'src/generated/schema.ts');

/** `generate --check --url <gateway>`: its exit code and output. */
const check = (url: string, ...extra: string[]) =>
  run(TSX, ['scripts/generate.ts', '--check', '--url', url, ...extra], { cwd: ROOT }).then(
    ({ stdout }) => ({ code: 0, output: stdout }),
    (error: { code: number; stderr: string }) => ({ code: error.code, output: error.stderr }),
  );

let platform: Platform;
beforeAll(async () => {
  platform = await startPlatform();
}, 180_000);
afterAll(() => platform?.stop(), 60_000);

test('When the platform runs, then the checked-in client types are those openapi-typescript makes of its merged /openapi.json', async () => {
  const result = await check(platform.gatewayUrl);
  expect(result).toEqual({ code: 0, output: expect.stringContaining('current') });
}, 60_000);

test('When the checked-in types differ from the merged document, then the check fails and says how to regenerate', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'client-types-'));
  const stale = path.join(dir, 'schema.ts');
  await copyFile(TYPES, stale);
  const text = await readFile(stale, 'utf8');
  await writeFile(stale, text.replace('"/eventos/{id}": {', '"/eventos/{id}/antigo": {'));
  const result = await check(platform.gatewayUrl, '--types', stale);
  expect(result.code).toBe(1);
  expect(result.output).toContain('pnpm --filter @hub/client generate');
  await rm(dir, { recursive: true, force: true });
}, 60_000);

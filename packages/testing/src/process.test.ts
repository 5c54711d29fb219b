import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnService } from './process';
import { waitFor } from './wait';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'spawn-service-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

it('When a spawned service is killed in a teardown, then kill() resolves once it is gone with its pipes closed, and at once when called again', async () => {
  const main = path.join(dir, 'main.ts');
  await writeFile(main, "setInterval(() => undefined, 1_000);\nconsole.log('de pé');\n");
  const service = spawnService(main, {});
  await waitFor(() => service.output().includes('de pé'), { what: 'the child to start' });
  await service.kill();
  expect(service.child.signalCode).toBe('SIGKILL');
  expect(service.child.stdout!.destroyed).toBe(true);
  expect(service.child.stderr!.destroyed).toBe(true);
  // A second teardown call does not hang.
  await service.kill();
});

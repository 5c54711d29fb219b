import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The repository's root. */
export const WORKSPACE_ROOT = path.resolve(__dirname, '../../..');

/** The workspace's packages and services, as directories from the root (packages/x, services/y). */
export function workspaceDirs(): string[] {
  return ['packages', 'services'].flatMap((group) =>
    readdirSync(path.join(WORKSPACE_ROOT, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${group}/${entry.name}`),
  );
}

/** Every TypeScript file under each package's and service's src/ (generated code aside): path from the root -> text. */
export function workspaceSources(): Map<string, string> {
  const files = new Map<string, string>();
  for (const dir of workspaceDirs()) {
    const src = path.join(WORKSPACE_ROOT, dir, 'src');
    for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.split(path.sep).includes('generated')) continue;
      files.set(`${dir}/src/${file.split(path.sep).join('/')}`, readFileSync(path.join(src, file), 'utf8'));
    }
  }
  return files;
}

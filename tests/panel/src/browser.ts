import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, chromium, type Page } from 'playwright-core';

const ROOT = path.resolve(__dirname, '../../..');
const PANEL = path.join(ROOT, 'services', 'panel');
/** Screenshots and figures of a run; ignored by git. */
export const ARTEFATOS = path.join(ROOT, 'tests', 'panel', 'artefatos');
/** The system's Chromium (Debian's package): Playwright's own browser downloads are not possible here. */
export const CHROMIUM = process.env.PANEL_CHROMIUM ?? '/usr/bin/chromium';

/** A name for the panel's sources as they are (the files Vite reads). */
async function panelSources(): Promise<string> {
  const hash = createHash('sha256');
  const visit = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      if (['node_modules', 'dist'].includes(entry.name)) continue;
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) await visit(file);
      else hash.update(file).update(await readFile(file));
    }
  };
  await visit(PANEL);
  return hash.digest('hex');
}

/**
 * Runs `work` alone among the processes of this machine that ask for the same lock (a directory made
 * atomically); a lock left by a process that died is taken over after two minutes.
 */
async function alone<T>(lock: string, work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
      const since = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (since > 120_000) await rm(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/**
 * Builds the panel as `pnpm build` does, so the test runs the code of this tree; answers the gzipped
 * JS size. Once per state of its sources: the three browser test files run at once, and a build
 * empties services/panel/dist first, which would take the files away from a gateway another file's
 * tests are using.
 */
export async function buildPanel(): Promise<{ jsBytes: number; jsGzipBytes: number }> {
  const dist = path.join(PANEL, 'dist');
  const built = path.join(dist, '.sources');
  await alone(path.join(PANEL, '.build-lock'), async () => {
    const sources = await panelSources();
    if ((await readFile(built, 'utf8').catch(() => '')) === sources) return;
    const vite = path.join(PANEL, 'node_modules', 'vite', 'bin', 'vite.js');
    // jest sets NODE_ENV=test, which would make Vite build for development.
    await promisify(execFile)(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
      cwd: PANEL,
      env: { ...process.env, NODE_ENV: 'production' },
    });
    await writeFile(built, sources);
  });
  const assets = path.join(dist, 'assets');
  let jsBytes = 0;
  let jsGzipBytes = 0;
  for (const name of (await readdir(assets)).filter((n) => n.endsWith('.js'))) {
    const content = await readFile(path.join(assets, name));
    jsBytes += content.length;
    jsGzipBytes += gzipSync(content, { level: 9 }).length;
  }
  return { jsBytes, jsGzipBytes };
}

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Chromium (apt-get install -y chromium) or set PANEL_CHROMIUM`);
  // Root in a container has no user namespace for Chromium's sandbox.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface Violation {
  tela: string;
  id: string;
  impact: string | null | undefined;
  help: string;
  nodes: string[];
}

/** axe on the page as it is; only serious and critical violations are returned. */
export async function seriousViolations(page: Page, tela: string): Promise<Violation[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ tela, id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

/**
 * A full-page screenshot into ARTEFATOS, with PANEL_SCREENSHOTS=1 only: a PNG of every screen at two
 * sizes is for a person reviewing the screens, and encoding them cost the suite's run CPU it needs.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.PANEL_SCREENSHOTS !== '1') return;
  await mkdir(ARTEFATOS, { recursive: true });
  await page.screenshot({ path: path.join(ARTEFATOS, `${name}.png`), fullPage: true });
}

export async function saveFigures(name: string, figures: object): Promise<void> {
  await mkdir(ARTEFATOS, { recursive: true });
  await writeFile(path.join(ARTEFATOS, name), `${JSON.stringify(figures, null, 2)}\n`);
}

/** True when the page is wider than the window: a layout that breaks on this viewport. */
// A string, evaluated in the page: this tree type-checks without the DOM library.
export const overflows = async (page: Page) =>
  (await page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1')) === true;

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
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

/** Builds the panel as `pnpm build` does, so the test runs the code of this tree; answers the gzipped JS size. */
export async function buildPanel(): Promise<{ jsBytes: number; jsGzipBytes: number }> {
  const vite = path.join(PANEL, 'node_modules', 'vite', 'bin', 'vite.js');
  // jest sets NODE_ENV=test, which would make Vite build for development.
  await promisify(execFile)(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
    cwd: PANEL,
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const assets = path.join(PANEL, 'dist', 'assets');
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

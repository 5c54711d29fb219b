import { type Assinante, iniciarAssinante, type Platform, startPlatform } from '@hub/platform-tests';
import type { Browser, Page } from 'playwright-core';
import { buildPanel, launch, overflows, screenshot, seriousViolations } from './browser';
import { type Api, apiComoMaster, assinar, ateNaApi, cadastrar, MASTER, publicar } from './cenario';

/**
 * The panel's replay screens in the system's Chromium against the real platform, as panel.test.ts
 * checks the others: Reproduzir on a subscription (the dates form), the replay's own screen with its
 * progress, and the list of replays, each passing axe at desktop and phone sizes.
 */
let platform: Platform;
let assinante: Assinante;
let browser: Browser;
let page: Page;
let base: string;
let api: Api;

const DESKTOP = { width: 1280, height: 800 };
const MOBILE = { width: 390, height: 844 };

beforeAll(async () => {
  [, platform, assinante] = await Promise.all([
    buildPanel(),
    startPlatform({ env: { gateway: { RATE_LIMIT_USER_PER_MINUTE: '100000' } } }),
    iniciarAssinante(),
  ]);
  base = `${platform.gatewayUrl}/painel`;
  api = apiComoMaster(platform);
  browser = await launch();
  page = await (await browser.newContext({ viewport: DESKTOP, locale: 'pt-BR' })).newPage();
  page.context().setDefaultTimeout(10_000);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await platform?.stop();
  await assinante?.fechar();
}, 60_000);

/** axe finds no serious or critical violation, and the page fits the window at both sizes. */
async function check(tela: string) {
  expect(await seriousViolations(page, tela)).toEqual([]);
  await screenshot(page, tela);
  await page.setViewportSize(MOBILE);
  const noCelular = await overflows(page);
  await screenshot(page, `${tela}-390`);
  await page.setViewportSize(DESKTOP);
  expect({ tela, noCelular, noDesktop: await overflows(page) }).toEqual({ tela, noCelular: false, noDesktop: false });
}

/** A datetime-local value (the browser's zone is the machine's: a day on each side covers it). */
const campo = (deslocamentoMs: number) => new Date(Date.now() + deslocamentoMs).toISOString().slice(0, 16);

test('When an operator replays two past events to a subscription made after them, then the form starts it, its screen shows the progress to concluida, the list shows it, the subscriber receives both, and every screen passes axe', async () => {
  const cadastro = await cadastrar(api, 'reproducao', [assinante.url('/antiga')]);
  await publicar(api, cadastro, 'pedido-r1');
  await publicar(api, cadastro, 'pedido-r2');
  const nova = await assinar(api, cadastro, assinante.url('/nova'));

  const form = page.getByRole('form', { name: 'Entrar' });
  await page.goto(`${base}/`);
  await form.getByLabel('E-mail').fill(MASTER);
  await form.getByLabel('Nome').fill('admin');
  await form.getByLabel('master').check();
  await form.getByRole('button', { name: 'Entrar' }).click();
  await page.getByRole('navigation', { name: 'Menu principal' }).waitFor();

  await page.goto(`${base}/assinaturas`);
  const linha = page.getByRole('row').filter({ hasText: assinante.url('/nova') });
  await linha.getByRole('link', { name: 'Reproduzir' }).click();
  await page.waitForURL(new RegExp(`/assinaturas/${nova.id}/reproduzir$`));
  await page.getByRole('heading', { level: 1, name: 'Reproduzir eventos' }).waitFor();
  await check('reproduzir');
  const reproduzir = page.getByRole('form', { name: 'Reproduzir' });
  await reproduzir.getByLabel('desde (recebido_em)').fill(campo(-86_400_000));
  await reproduzir.getByLabel('ate (recebido_em)').fill(campo(86_400_000));
  await reproduzir.getByRole('button', { name: 'Reproduzir' }).click();

  await page.waitForURL(/\/reproducoes\/[0-9a-f-]{36}$/);
  await page
    .getByRole('status')
    .filter({ hasText: '2 criadas, 0 reenviadas, 0 ignoradas' })
    .waitFor({ timeout: 30_000 });
  await page.getByText('concluida', { exact: true }).waitFor({ timeout: 30_000 });
  await check('reproducao');
  const id = page.url().split('/').pop()!;
  await expect(api<{ assinatura_id: string; criadas: number }>('GET', `/reproducao/${id}`)).resolves.toMatchObject({
    assinatura_id: nova.id,
    criadas: 2,
  });

  await page.goto(`${base}/reproducoes?assinatura_id=${nova.id}`);
  await page.getByRole('table', { name: 'Reproduções' }).getByRole('link').first().waitFor();
  await check('reproducoes');
  await ateNaApi<{ total: number }>(
    api,
    `/entrega?assinatura_id=${nova.id}&situacao=concluida`,
    (p) => p.total === 2,
    'both replayed deliveries concluded',
  );
  expect(assinante.de('/nova')).toHaveLength(2);
}, 180_000);

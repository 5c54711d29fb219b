import {
  auth,
  cenario,
  criarAplicativo,
  gravarEvento,
  gravarTentativa,
  type HubComGateway,
  iniciarHubComGateway,
  waitFor,
} from '@hub/platform-tests/src/hub-com-gateway';
import type { Browser, Page } from 'playwright-core';
import { buildPanel, launch, overflows, screenshot, seriousViolations } from './browser';

/**
 * The subscribers' portal in the system's Chromium, built from this tree and served by the real
 * gateway at /portal/ in front of a real hub-api: a subscribing application's developer opens an
 * operator's link and manages its subscriptions and deliveries, under the panel's CSP, with axe at
 * desktop and phone sizes.
 */
// Each walk drives Chromium through several screens with axe at two sizes, as the panel's do.
jest.setTimeout(120_000);

let hub: HubComGateway;
let browser: Browser;
let page: Page;
let cspRefusals: string[] = [];
const DESKTOP = { width: 1280, height: 800 };
const MOBILE = { width: 390, height: 844 };

beforeAll(async () => {
  [hub] = await Promise.all([iniciarHubComGateway(), buildPanel()]);
  browser = await launch();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await hub?.encerrar();
}, 60_000);
beforeEach(async () => {
  cspRefusals = [];
  const context = await browser.newContext({ viewport: DESKTOP, locale: 'pt-BR' });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspRefusals.push(m.text());
  });
});
afterEach(async () => {
  await page.context().close();
  expect(cspRefusals).toEqual([]);
});

const ctx = () => hub.ctx;
const painel = () => auth(ctx().todas);

/** A publisher's type, a subscriber with a panel-made subscription, one delivery with a failed attempt, and the subscriber's link. */
async function cenarioDoPortal() {
  const c = await cenario(ctx());
  const assinante = await criarAplicativo(ctx(), 'Loja do assinante');
  const assinatura = await ctx().api().post('/assinatura').set(painel()).send({
    aplicativo_assinante_id: assinante.id,
    tipo_de_evento_id: c.tipo.id,
    versao_do_esquema: 1,
    url_de_destino: 'https://recebedor.example/webhook',
  });
  const linhas = {
    aplicativoId: c.dono.id,
    tipoId: c.tipo.id,
    versao: 1,
    assinaturaId: assinatura.body.id,
    assinanteId: assinante.id,
  };
  const evento = await gravarEvento(ctx().hub.db, linhas, { recebidoEm: new Date(), entregas: ['fila_de_erro'] });
  await gravarTentativa(ctx().hub.db, evento.entregas[0]!, 1, 503);
  const link = await ctx().api().post(`/aplicativo/${assinante.id}/portal`).set(painel()).send({}).expect(201);
  return {
    c,
    assinante,
    assinaturaId: assinatura.body.id as string,
    entregaId: evento.entregas[0]!,
    token: link.body.token as string,
  };
}

/** axe finds nothing serious at desktop and phone sizes, the page fits both, and both are kept as screenshots. */
async function check(tela: string) {
  const problemas = [...(await seriousViolations(page, tela))];
  await screenshot(page, tela);
  await page.setViewportSize(MOBILE);
  problemas.push(...(await seriousViolations(page, `${tela}-390`)));
  const quebra = await overflows(page);
  await screenshot(page, `${tela}-390`);
  await page.setViewportSize(DESKTOP);
  expect({ problemas, quebra }).toEqual({ problemas: [], quebra: false });
}

const abrir = async (token: string) => {
  await page.goto(`${hub.gatewayUrl}/portal/#token=${token}`);
  await page.getByRole('heading', { level: 1, name: 'Assinaturas' }).waitFor();
};
const aba = (nome: string) =>
  page.getByRole('navigation', { name: 'Seções do portal' }).getByRole('button', { name: nome });

test('When the developer opens the link, then the token leaves the address bar, and every tab renders and passes axe at both sizes', async () => {
  const s = await cenarioDoPortal();
  await abrir(s.token);
  expect(new URL(page.url()).hash).toBe('');
  await page.getByRole('table', { name: 'Assinaturas' }).getByText('https://recebedor.example/webhook').waitFor();
  await page.getByText('1 tentativas, 1 falhas (24 h)').waitFor();
  await check('portal-assinaturas');
  await aba('Tipos de evento').click();
  const tipo = page.getByRole('listitem').filter({ has: page.getByRole('heading', { level: 2, name: s.c.tipo.nome }) });
  await tipo.getByText('Versão 1', { exact: true }).click();
  await page.getByTitle(`Exemplo de ${s.c.tipo.nome} v1`).waitFor();
  await check('portal-tipos');
  await aba('Entregas').click();
  await page.getByRole('table', { name: 'Entregas' }).waitFor();
  await page.getByRole('button', { name: /^Tentativas da entrega/ }).click();
  await page
    .getByRole('table', { name: `Tentativas da entrega ${s.entregaId}` })
    .getByText('503')
    .waitFor();
  await check('portal-entregas');
});

test('When the developer creates, tests, edits and deletes a subscription, then each change is made by its application', async () => {
  const s = await cenarioDoPortal();
  await abrir(s.token);
  const novo = page.getByRole('form', { name: 'Nova assinatura' });
  await novo.getByLabel('Tipo de evento').selectOption({ label: s.c.tipo.nome });
  await novo.getByLabel('url_de_destino').fill('https://recebedor.example/portal');
  await novo.getByLabel('filtro (JSON)').fill('{"dados.valor": {"$gte": 100}}');
  const teste = page.getByRole('form', { name: 'Testar o filtro contra estes dados' });
  await teste.getByLabel('dados de exemplo (JSON)').fill('{"valor": 150}');
  await teste.getByRole('button', { name: 'Testar contra estes dados' }).click();
  await page.getByText('Corresponde: a assinatura receberia este evento.').waitFor();
  await novo.getByLabel('formato').selectOption('cloudevents');
  await novo.getByRole('button', { name: 'Criar' }).click();
  const tabela = page.getByRole('table', { name: 'Assinaturas' });
  await tabela.getByText('https://recebedor.example/portal').waitFor();
  const criada = await ctx().hub.db.assinatura.findFirstOrThrow({
    where: { aplicativoAssinanteId: s.assinante.id, urlDeDestino: 'https://recebedor.example/portal' },
  });
  expect(criada).toMatchObject({
    formato: 'cloudevents',
    alteradaPorTipo: 'aplicativo',
    alteradaPor: s.assinante.client_id,
    filtro: { 'dados.valor': { $gte: 100 } },
  });

  const nome = `${s.c.tipo.nome} v1`;
  const linha = tabela.getByRole('row').filter({ hasText: 'https://recebedor.example/portal' });
  await linha.getByRole('button', { name: `Editar URL da assinatura de ${nome}` }).click();
  // Only the row being edited has this form open.
  const edicao = page.getByRole('form', { name: `Editar URL da assinatura de ${nome}` });
  await edicao.getByLabel(`URL da assinatura de ${nome}`).fill('https://recebedor.example/novo');
  await edicao.getByRole('button', { name: 'Salvar' }).click();
  await tabela.getByText('https://recebedor.example/novo').waitFor();
  const editada = tabela.getByRole('row').filter({ hasText: 'https://recebedor.example/novo' });
  await editada.getByLabel(`formato da assinatura de ${nome}`).selectOption('standard-webhooks');
  await waitFor(
    async () =>
      (await ctx().hub.db.assinatura.findUniqueOrThrow({ where: { id: criada.id } })).formato === 'standard-webhooks',
  );
  await editada.getByRole('button', { name: `Excluir a assinatura de ${nome}` }).click();
  await editada.getByRole('button', { name: 'Confirmar' }).click();
  await tabela.getByText('https://recebedor.example/novo').waitFor({ state: 'detached' });
  expect(await ctx().hub.db.assinatura.findUniqueOrThrow({ where: { id: criada.id } })).toMatchObject({
    urlDeDestino: 'https://recebedor.example/novo',
    alteradaPorTipo: 'aplicativo',
    excluidaEm: expect.any(Date),
  });
});

test('When the developer resends a delivery, then it starts a new cycle; once the links are revoked the portal says so', async () => {
  const s = await cenarioDoPortal();
  await abrir(s.token);
  await aba('Entregas').click();
  await page.getByRole('button', { name: /^Reenviar a entrega/ }).click();
  await waitFor(
    async () => (await ctx().hub.db.entrega.findUniqueOrThrow({ where: { id: s.entregaId } })).situacao === 'pendente',
  );
  // The list reloaded after the resend shows it: nothing of the portal is still under way.
  await page.getByRole('table', { name: 'Entregas' }).getByText('pendente').waitFor();
  await ctx().api().delete(`/aplicativo/${s.assinante.id}/portal`).set(painel()).expect(204);
  await aba('Assinaturas').click();
  await page.getByText('O link do portal expirou ou foi revogado.').waitFor();
  await check('portal-revogado');
});

test('When the developer asks for a replay, then the portal follows its progress until it concludes', async () => {
  const s = await cenarioDoPortal();
  await abrir(s.token);
  const nome = `${s.c.tipo.nome} v1`;
  await page.getByRole('button', { name: `Reproduzir eventos de ${nome}` }).click();
  const form = page.getByRole('form', { name: `Reproduzir eventos de ${nome}` });
  const campo = (ms: number) =>
    new Date(Date.now() + ms - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  await form.getByLabel('desde').fill(campo(-3_600_000));
  await form.getByLabel('até').fill(campo(3_600_000));
  await form.getByLabel('incluir as já entregues').check();
  await form.getByRole('button', { name: 'Pedir reprodução' }).click();
  // The one stored event already had a delivery: a new cycle of it.
  await form
    .getByText('Reprodução concluida: 0 criadas, 1 reenviadas, 0 ignoradas, de 1 eventos.')
    .waitFor({ timeout: 20_000 });
  expect((await ctx().hub.db.entrega.findUniqueOrThrow({ where: { id: s.entregaId } })).situacao).not.toBe(
    'fila_de_erro',
  );
});

test('When the portal is opened without a token, then it says how to get one', async () => {
  await page.goto(`${hub.gatewayUrl}/portal/`);
  await page.getByText('Abra o portal pelo link que o operador do hub enviou').waitFor();
});

test('When an operator asks the panel for an application’s portal link, then the link opens the portal, and the panel shows who changed each subscription', async () => {
  const s = await cenarioDoPortal();
  const nome = `Aaa portal ${s.assinante.client_id}`;
  await ctx().api().patch(`/aplicativo/${s.assinante.id}`).set(painel()).send({ nome }).expect(200);
  // Signed in as the operator: the panel's own token key in this tab, before the page loads.
  await page.addInitScript(`sessionStorage.setItem('hub.painel.token', ${JSON.stringify(ctx().todas)})`);
  await page.goto(`${hub.gatewayUrl}/painel/aplicativos`);
  await page.getByRole('button', { name: `Link do portal de ${nome}` }).click();
  const campo = page.getByRole('textbox', { name: /^Link \(vale até/ });
  const url = await campo.inputValue();
  expect(url).toMatch(/\/portal\/#token=portal_/);
  await check('painel-aplicativos-link-do-portal');
  await page.goto(`${hub.gatewayUrl}/portal/${url.slice(url.indexOf('#'))}`);
  await page.getByRole('heading', { level: 1, name: 'Assinaturas' }).waitFor();
  await page.getByRole('table', { name: 'Assinaturas' }).getByText('https://recebedor.example/webhook').waitFor();
  const linha = page
    .getByRole('table', { name: 'Assinaturas' })
    .getByRole('row')
    .filter({ hasText: 'recebedor.example/webhook' });
  await linha.getByRole('button', { name: /^Desativar/ }).click();
  await linha.getByRole('button', { name: /^Ativar/ }).waitFor();
  await page.goto(`${hub.gatewayUrl}/painel/assinaturas`);
  const noPainel = page.getByRole('table', { name: 'Assinaturas' }).getByRole('row').filter({ hasText: nome });
  await noPainel.getByText(`aplicativo ${s.assinante.client_id}`).waitFor();
});

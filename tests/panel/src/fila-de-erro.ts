import type { Page } from 'playwright-core';
import type { Receptor } from './receptor';

/** What the flow needs of the test file: its page, the panel's address and its axe-and-screenshot check. */
export interface Contexto {
  page: Page;
  base: string;
  receptor: Receptor;
  check: (tela: string) => Promise<void>;
}

/** Long enough for a loaded machine: the lists refresh themselves, so waiting is all it takes. */
const ESPERA = { timeout: 90_000 };

/**
 * Issue 11's flow, only through the screens: a subscription (maximo_de_tentativas 2) at a receiver
 * that answers 500, an event published from the screen, the delivery seen in fila_de_erro in
 * Entregas and as a message of the error queue in Filas; then the receiver answers 200, the
 * delivery is selected and reprocessed with the keyboard, and the reprocessing screen shows it
 * `concluida`. Answers the delivery's id.
 */
export async function filaDeErroPelaTela({ page, base, receptor, check }: Contexto): Promise<string> {
  const form = (name: string) => page.getByRole('form', { name });

  await page.goto(`${base}/assinaturas`);
  const assinatura = form('Nova assinatura');
  await assinatura.getByLabel('Aplicativo assinante').selectOption({ label: 'Estoque (estoque-painel)' });
  await assinatura.getByLabel('Tipo de evento').selectOption({ label: 'pedido.criado' });
  await assinatura.getByLabel('versao_do_esquema').fill('1');
  await assinatura.getByLabel('url_de_destino').fill(receptor.url);
  await assinatura.getByLabel('maximo_de_tentativas').fill('2');
  await assinatura.getByRole('button', { name: 'Criar' }).click();
  await page.getByRole('cell', { name: receptor.url, exact: true }).waitFor();

  await page.goto(`${base}/eventos/publicar`);
  const novo = form('Novo evento');
  await novo.getByLabel('Tipo de evento').selectOption({ label: 'pedido.criado' });
  await novo.getByLabel('Versão do esquema').selectOption({ label: 'versão 1' });
  await novo.getByLabel('entidade_id').fill('pedido-500');
  await novo.getByLabel('dados (JSON)').fill('{"pedido_id": "p-500", "valor": 5}');
  await novo.getByRole('button', { name: 'Publicar' }).click();
  await page.waitForURL(/\/painel\/eventos\/[0-9a-f-]{36}$/);

  // Entregas, filtered by situacao: the delivery arrives there after its two attempts.
  await page.goto(`${base}/entregas`);
  const filtros = page.getByRole('form', { name: 'Filtros de entregas' });
  await filtros.getByLabel('situacao').selectOption('fila_de_erro');
  await filtros.getByRole('button', { name: 'Filtrar' }).click();
  const linha = page.getByRole('row').filter({ hasText: receptor.url });
  await linha.getByText('fila_de_erro', { exact: true }).waitFor(ESPERA);
  const href = (await linha.getByRole('link').first().getAttribute('href')) ?? '';
  const entregaId = href.split('/').pop() ?? '';
  await linha.getByText('2/2 (2)').waitFor();
  await check('entregas-fila-de-erro');

  // Filas: the error queue's row opens a look at its messages, our delivery among them.
  await page.goto(`${base}/filas`);
  await page.getByRole('button', { name: /^Ver mensagens da fila / }).click();
  const mensagens = page.getByRole('table', { name: /^Mensagens da fila / });
  const mensagem = mensagens.getByRole('row').filter({ has: page.locator(`a[href$="/entregas/${entregaId}"]`) });
  await mensagem.getByText('tentativas_esgotadas').waitFor(ESPERA);
  await check('filas-mensagens');

  // The receiver recovers; the operator selects the delivery and reprocesses it from the keyboard.
  receptor.falhar = false;
  await page.goto(`${base}/entregas?situacao=fila_de_erro`);
  const seletor = page.getByRole('checkbox', { name: `Selecionar a entrega ${entregaId}` });
  await seletor.waitFor(ESPERA);
  await seletor.focus();
  await page.keyboard.press('Space');
  const reprocessar = page.getByRole('button', { name: 'Reprocessar selecionadas (1)' });
  await reprocessar.press('Enter');
  const resposta = page.getByRole('heading', { name: 'Reprocessamento', exact: true }).or(page.getByRole('alert'));
  await resposta.first().waitFor(ESPERA);
  const recusa = await page.getByRole('alert').allTextContents();
  if (recusa.length) throw new Error(`reprocessing refused on screen: ${recusa.join(' · ')}`);
  await page.waitForURL(/\/painel\/reprocessamentos\/[0-9a-f-]{36}$/);

  const acompanhadas = page.getByRole('table', { name: 'Entregas do reprocessamento' });
  await page.getByText('1 de 1 reprocessadas').waitFor(ESPERA);
  await acompanhadas
    .getByRole('row')
    .filter({ hasText: receptor.url })
    .getByText('concluida', { exact: true })
    .waitFor(ESPERA);
  await check('reprocessamento');

  await page.goto(`${base}/entregas/${entregaId}`);
  await page.locator('.detalhe .situacao.concluida').waitFor(ESPERA);
  return entregaId;
}

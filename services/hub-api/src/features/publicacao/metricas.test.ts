import { type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { assinar, cenario, publicar } from './cenario.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

/** One sample of /metrics, by its name, or its name and first labels as written (`name{a="b"`); 0 when absent. */
async function amostra(nome: string): Promise<number> {
  const texto = (await ctx.api().get('/metrics')).text;
  const linha = texto.split('\n').find((l) => l.startsWith(nome.includes('{') ? nome : `${nome}{`));
  return linha ? Number(linha.split(' ').at(-1)) : 0;
}

test('When events are accepted and refused, then /metrics counts them, the refusals by codigo', async () => {
  const c = await cenario(ctx);
  await assinar(ctx, c.tipo.id);
  const aceitosAntes = await amostra('hub_eventos_aceitos_total');
  const recusadosAntes = await amostra('hub_eventos_recusados_total{codigo="dados_invalidos"');
  expect((await publicar(ctx, c.tokenDoDono, c.corpo())).status).toBe(201);
  expect((await publicar(ctx, c.tokenDoDono, c.corpo())).status).toBe(201);
  expect((await publicar(ctx, c.tokenDoDono, c.corpo({ dados: 'não é um objeto' }))).status).toBe(422);
  expect(await amostra('hub_eventos_aceitos_total')).toBe(aceitosAntes + 2);
  expect(await amostra('hub_eventos_recusados_total{codigo="dados_invalidos"')).toBe(recusadosAntes + 1);
});

test('When events are accepted, then hub_group_commit_items counts the statements of the group write and the publications they wrote', async () => {
  const c = await cenario(ctx);
  await assinar(ctx, c.tipo.id);
  /** A series of the histogram of the publication's writes (after the service's own default label). */
  const escrita = async (serie: 'sum' | 'count') => {
    const texto = (await ctx.api().get('/metrics')).text;
    const linha = texto
      .split('\n')
      .find((l) => l.startsWith(`hub_group_commit_items_${serie}{`) && l.includes('escrita="publicacao"'));
    return linha ? Number(linha.split(' ').at(-1)) : 0;
  };
  const [itens, vezes] = [await escrita('sum'), await escrita('count')];
  const publicacoes = await Promise.all(Array.from({ length: 5 }, () => publicar(ctx, c.tokenDoDono, c.corpo())));
  expect(publicacoes.map((p) => p.status)).toEqual([201, 201, 201, 201, 201]);
  expect(await escrita('sum')).toBe(itens + 5);
  const statements = (await escrita('count')) - vezes;
  expect(statements).toBeGreaterThanOrEqual(1);
  expect(statements).toBeLessThanOrEqual(5);
});

test('When /metrics is read, then it has the outbox lag, the depth and consumers of every delivery queue, and requests by route and status', async () => {
  await ctx.api().get('/evento/nao-e-um-id');
  const texto = (await ctx.api().get('/metrics')).text;
  expect(texto).toMatch(/^hub_outbox_lag_seconds\{service="hub-api"\} \d+(\.\d+)?$/m);
  expect(texto).toMatch(
    /^hub_fila_mensagens\{fila="delivery-worker\.entregas\.v2",papel="trabalho",service="hub-api"\} \d+$/m,
  );
  expect(texto).toMatch(/^hub_fila_consumidores\{fila="delivery-worker\.erro",papel="erro",service="hub-api"\} \d+$/m);
  // Without a token: 401, counted under the route's template, not the raw path.
  expect(texto).toMatch(
    /^http_request_duration_seconds_count\{service="hub-api",method="GET",route="\/evento\/:id",status="401"\} \d+$/m,
  );
});

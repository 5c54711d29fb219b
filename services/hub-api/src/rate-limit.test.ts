import { BODY_LIMIT } from '@hub/http';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from './contexto.test-support';
import { criarCenario, gravarEvento } from './features/eventos/linhas.test-support';
import { cenario, publicar } from './features/publicacao/cenario.test-support';

// Budgets of hub-api itself, per application and minute: 3 publications, 2 resends.
let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto({ env: { HUB_PUBLICACOES_POR_MINUTO: '3', HUB_REENVIOS_POR_MINUTO: '2' } });
}, 60_000);
afterAll(() => encerrarContexto(ctx));

const restantes = (r: { headers: Record<string, string> }) => /^"[a-z]+";r=(\d+);t=(\d+)$/.exec(r.headers.ratelimit!);

/** A 429 as the gateway answers one: problem+json, Retry-After within the minute, the budget's headers. */
function expectMuitasRequisicoes(r: { status: number; headers: Record<string, string>; body: unknown }, q: number) {
  expect(r.status).toBe(429);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ status: 429, codigo: 'muitas_requisicoes' });
  const retryAfter = Number(r.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(r.headers['ratelimit-policy']).toMatch(new RegExp(`^"[a-z]+";q=${q};w=60$`));
  expect(restantes(r)?.[1]).toBe('0');
}

describe('POST /eventos without the gateway', () => {
  test('When an application publishes more than HUB_PUBLICACOES_POR_MINUTO in a minute, fast path and express path together, then one more is 429 with Retry-After, nothing stored; another application and the panel still publish', async () => {
    const c = await cenario(ctx);
    const primeira = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'r-1' }));
    expect(primeira.status).toBe(201);
    expect(primeira.headers['ratelimit-policy']).toBe('"aplicativo";q=3;w=60');
    expect(restantes(primeira)?.[1]).toBe('2');
    // A query string takes the express path: it counts against the same budget.
    const pelaExpress = await ctx
      .api()
      .post('/eventos?via=express')
      .set(auth(c.tokenDoDono))
      .send(c.corpo({ entidade_id: 'r-2' }));
    expect({ status: pelaExpress.status, r: restantes(pelaExpress)?.[1] }).toEqual({ status: 201, r: '1' });
    expect((await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'r-3' }))).status).toBe(201);

    const recusada = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'r-4' }));
    expectMuitasRequisicoes(recusada, 3);
    expect(recusada.body.detail).toBe(
      'more than 3 publications per minute for this application; wait for Retry-After seconds',
    );
    const pelaExpressRecusada = await ctx
      .api()
      .post('/eventos?via=express')
      .set(auth(c.tokenDoDono))
      .send(c.corpo({ entidade_id: 'r-4' }));
    expectMuitasRequisicoes(pelaExpressRecusada, 3);
    const guardados = await ctx.hub.db.evento.count({ where: { tipoDeEventoId: c.tipo.id } });
    expect(guardados).toBe(3);
    // Not a refused publication either: a 429 costs no write.
    expect(await ctx.hub.db.eventoRecusado.count({ where: { aplicativoId: c.dono.id } })).toBe(0);

    const outra = await cenario(ctx);
    expect((await publicar(ctx, outra.tokenDoDono, outra.corpo())).status).toBe(201);
    // The panel's test publication is a user's request (the gateway's budget per user), not the application's.
    const doPainel = await ctx
      .api()
      .post('/evento')
      .set(auth(ctx.todas))
      .send(c.corpo({ entidade_id: 'teste' }));
    expect(doPainel.status).toBe(201);
    expect(doPainel.headers.ratelimit).toBeUndefined();
  });

  test('When a publication is larger than the 1 MiB body limit (the gateway’s GATEWAY_BODY_LIMIT default), then 413 corpo_grande_demais', async () => {
    const c = await cenario(ctx);
    const grande = JSON.stringify(c.corpo({ dados: { texto: 'x'.repeat(BODY_LIMIT) } }));
    const response = await ctx
      .api()
      .post('/eventos')
      .set({ ...auth(c.tokenDoDono), 'content-type': 'application/json' })
      .send(grande);
    expect({ status: response.status, codigo: response.body.codigo }).toEqual({
      status: 413,
      codigo: 'corpo_grande_demais',
    });
  });
});

describe('POST /entregas/{id}/reenviar', () => {
  test('When a subscribing application resends more than HUB_REENVIOS_POR_MINUTO in a minute, then one more is 429 with Retry-After and the delivery is unchanged; its reads and another application are not held back', async () => {
    const c = await criarCenario(ctx);
    const outro = await criarCenario(ctx);
    const clientId = async (id: string) =>
      (await ctx.api().get(`/aplicativo/${id}`).set(auth(ctx.todas))).body.client_id as string;
    const token = await ctx.identity.appToken(await clientId(c.assinanteId));
    const [a, b] = (await gravarEvento(ctx.hub.db, c, { recebidoEm: new Date(), entregas: ['concluida', 'concluida'] }))
      .entregas;
    const reenviar = (id: string, t = token) => ctx.api().post(`/entregas/${id}/reenviar`).set(auth(t));

    const primeiro = await reenviar(a!);
    expect({ status: primeiro.status, politica: primeiro.headers['ratelimit-policy'] }).toEqual({
      status: 202,
      politica: '"reenvio";q=2;w=60',
    });
    // Refused as still in the queue, it counts all the same: the budget is of requests.
    expect((await reenviar(a!)).status).toBe(409);
    const antes = await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: b! } });
    const recusado = await reenviar(b!);
    expectMuitasRequisicoes(recusado, 2);
    expect(recusado.body.detail).toBe(
      'more than 2 resends per minute for this application; wait for Retry-After seconds',
    );
    expect(await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: b! } })).toEqual(antes);

    expect((await ctx.api().get(`/entregas/${b}`).set(auth(token))).status).toBe(200);
    const [d] = (await gravarEvento(ctx.hub.db, outro, { recebidoEm: new Date(), entregas: ['concluida'] })).entregas;
    expect((await reenviar(d!, await ctx.identity.appToken(await clientId(outro.assinanteId)))).status).toBe(202);
  });
});

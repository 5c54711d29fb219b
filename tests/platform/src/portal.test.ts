import { auth, type Contexto, criarAplicativo } from '@hub/hub-api/src/contexto.test-support';
import { cenario } from '@hub/hub-api/src/features/publicacao/cenario.test-support';
import type { TestHubApi } from '@hub/hub-api/src/hub-api.test-support';
import { waitFor } from '@hub/testing';
import request from 'supertest';
import { type HubComGateway, iniciarHubComGateway } from './hub-com-gateway';

/**
 * A portal token through the real gateway, in front of two hub-api instances on one database (each
 * request to the next in turn): it opens the subscriber routes, publishes nothing, reaches no panel
 * route, and a revocation made on one instance holds on the other within 2 s.
 */
describe('the subscribers’ portal through the gateway, over two hub-api instances', () => {
  let hub: HubComGateway;
  let ctx: Contexto;
  let segunda: TestHubApi;
  beforeAll(async () => {
    hub = await iniciarHubComGateway({ instancias: 2 });
    ctx = hub.ctx;
    segunda = hub.replicas[0]!;
  }, 60_000);
  afterAll(() => hub?.encerrar());

  const peloGateway = () => request(hub.gatewayUrl);
  const link = async (aplicativoId: string) =>
    (await peloGateway().post(`/aplicativo/${aplicativoId}/portal`).set(auth(ctx.todas)).send({}).expect(201)).body
      .token as string;

  it('When the token goes through the gateway, then the subscriber routes answer on both instances, and POST /eventos and panel routes are 401', async () => {
    const c = await cenario(ctx);
    const token = await link(c.dono.id);
    for (let i = 0; i < 4; i += 1) expect((await peloGateway().get('/assinaturas').set(auth(token))).status).toBe(200);
    const tipos = await peloGateway().get('/tipos-de-evento?tamanho=100').set(auth(token));
    expect(tipos.body.itens.map((t: { id: string }) => t.id)).toContain(c.tipo.id);
    const publicacao = await peloGateway().post('/eventos').set(auth(token)).send(c.corpo());
    expect([publicacao.status, publicacao.body.codigo]).toEqual([401, 'token_invalido']);
    // Straight to the second instance too: its fast path of POST /eventos refuses it the same way.
    const direto = await request(segunda.url).post('/eventos').set(auth(token)).send(c.corpo());
    expect([direto.status, direto.body.codigo]).toEqual([401, 'token_invalido']);
    expect(await ctx.hub.db.evento.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(0);
    // The function service does not run here: access and hub-api's panel routes stand for the rest.
    for (const path of ['/assinatura', '/entrega', '/aplicativo', '/auth/acesso', '/evento/resumo']) {
      const response = await peloGateway().get(path).set(auth(token));
      expect({ path, status: response.status }).toEqual({ path, status: 401 });
    }
  });

  it('When an operator revokes the links on one instance, then the other refuses the token within 2 s', async () => {
    const aplicativo = await criarAplicativo(ctx);
    const token = await link(aplicativo.id as string);
    expect((await request(segunda.url).get('/entregas').set(auth(token))).status).toBe(200);
    expect((await request(ctx.hub.url).get('/entregas').set(auth(token))).status).toBe(200);
    await request(ctx.hub.url).delete(`/aplicativo/${aplicativo.id}/portal`).set(auth(ctx.todas)).expect(204);
    const revogadoEm = Date.now();
    await waitFor(async () => (await request(segunda.url).get('/entregas').set(auth(token))).status === 401, {
      timeoutMs: 2000,
      what: 'the second instance to refuse the revoked token',
    });
    expect(Date.now() - revogadoEm).toBeLessThan(2000);
    for (let i = 0; i < 4; i += 1) {
      const response = await peloGateway().get('/assinaturas').set(auth(token));
      expect([response.status, response.body.codigo]).toEqual([401, 'token_invalido']);
    }
  });
});

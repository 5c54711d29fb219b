import { waitFor } from '@hub/testing';
import { auth, type Contexto, criarAplicativo, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { gravarEvento } from '../eventos/linhas.test-support';
import { cenario, publicar } from '../publicacao/cenario.test-support';
import { digestoDoToken } from './token';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto({ env: { HUB_GATEWAY_URL: 'https://hub.example.com/' } });
}, 60_000);
afterAll(() => encerrarContexto(ctx));

const painel = () => auth(ctx.todas);
const HORA_MS = 60 * 60 * 1000;

/** A link to the portal of the application, as an operator asks for it. */
async function link(aplicativoId: string, corpo: Record<string, unknown> = {}) {
  const response = await ctx.api().post(`/aplicativo/${aplicativoId}/portal`).set(painel()).send(corpo);
  if (response.status !== 201) throw new Error(`POST portal answered ${response.status}: ${response.text}`);
  return response.body as { url: string; token: string; expira_em: string };
}

/** A publisher with a type, a subscriber of it with a subscription and a delivery, and the subscriber's link. */
async function assinanteComEntrega() {
  const c = await cenario(ctx);
  const assinante = await criarAplicativo(ctx, 'Assinante');
  const assinatura = await ctx.api().post('/assinatura').set(painel()).send({
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
  const evento = await gravarEvento(ctx.hub.db, linhas, { recebidoEm: new Date(), entregas: ['concluida'] });
  return {
    c,
    assinante,
    assinaturaId: assinatura.body.id as string,
    entregaId: evento.entregas[0]!,
    link: await link(assinante.id),
  };
}

const linksDe = (aplicativoId: string) => ctx.hub.db.linkDoPortal.findMany({ where: { aplicativoId } });

describe('POST /aplicativo/{id}/portal', () => {
  test('When an operator asks for a link, then 201 { url, token, expira_em } one hour ahead, the url on the gateway with the token in the fragment, and only its digest stored', async () => {
    const aplicativo = await criarAplicativo(ctx);
    const antes = Date.now();
    const corpo = await link(aplicativo.id);
    expect(Object.keys(corpo).sort()).toEqual(['expira_em', 'token', 'url']);
    expect(corpo.url).toBe(`https://hub.example.com/portal/#token=${corpo.token}`);
    expect(corpo.token).toMatch(/^portal_[A-Za-z0-9_-]{43}$/);
    const fim = Date.parse(corpo.expira_em);
    expect(fim).toBeGreaterThanOrEqual(antes + HORA_MS);
    expect(fim).toBeLessThanOrEqual(Date.now() + HORA_MS);
    const [linha] = await linksDe(aplicativo.id);
    expect(linha).toMatchObject({ tokenSha256: digestoDoToken(corpo.token), revogadoEm: null });
    expect(linha?.criadoPeloEmail).toMatch(/^monitor\./);
    expect(JSON.stringify(linha)).not.toContain(corpo.token);
  });

  test('When expira_em is given within 24 h, then the link ends then', async () => {
    const aplicativo = await criarAplicativo(ctx);
    const expira_em = new Date(Date.now() + 23 * HORA_MS).toISOString();
    expect((await link(aplicativo.id, { expira_em })).expira_em).toBe(expira_em);
  });

  test('When expira_em is more than 24 h ahead, past, not RFC 3339, holds a NUL, or the body has another field, then 422 and no link is made', async () => {
    const aplicativo = await criarAplicativo(ctx);
    const casos: [unknown, string][] = [
      [{ expira_em: new Date(Date.now() + 24 * HORA_MS + 60_000).toISOString() }, 'expira_em_invalido'],
      [{ expira_em: new Date(Date.now() - 1000).toISOString() }, 'expira_em_invalido'],
      [{ expira_em: '2026-12-02 10:00' }, 'dados_invalidos'],
      [{ expira_em: '2026-12-02T10:00:00Z\u0000' }, 'dados_invalidos'],
      [{ expira_em: 3600 }, 'dados_invalidos'],
      [{ aplicativo_id: aplicativo.id }, 'dados_invalidos'],
      [[], 'dados_invalidos'],
    ];
    for (const [corpo, codigo] of casos) {
      const response = await ctx
        .api()
        .post(`/aplicativo/${aplicativo.id}/portal`)
        .set({ ...painel(), 'content-type': 'application/json' })
        .send(JSON.stringify(corpo));
      expect({ corpo, status: response.status, codigo: response.body.codigo }).toEqual({ corpo, status: 422, codigo });
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      if (codigo === 'expira_em_invalido')
        expect(response.body.erros).toEqual([{ caminho: '/expira_em', mensagem: expect.any(String) }]);
    }
    const malformado = await ctx
      .api()
      .post(`/aplicativo/${aplicativo.id}/portal`)
      .set({ ...painel(), 'content-type': 'application/json' })
      .send('{"expira_em":');
    expect([malformado.status, malformado.body.codigo]).toEqual([400, 'json_invalido']);
    expect(await linksDe(aplicativo.id)).toEqual([]);
  });

  test('When the caller lacks monitoramento.editar, holds an application token, or the application is unknown or off, then 403, 401, 404 or 409 and no link', async () => {
    const aplicativo = await criarAplicativo(ctx);
    const deApp = await ctx.identity.appToken(aplicativo.client_id as string);
    const caminho = `/aplicativo/${aplicativo.id}/portal`;
    expect((await ctx.api().post(caminho).set(auth(ctx.leitor)).send({})).status).toBe(403);
    expect((await ctx.api().delete(caminho).set(auth(ctx.leitor))).status).toBe(403);
    expect((await ctx.api().post(caminho).set(auth(deApp)).send({})).status).toBe(401);
    expect((await ctx.api().post(caminho).send({})).status).toBe(401);
    const ausente = '/aplicativo/01900000-0000-7000-8000-00000000ffff/portal';
    expect((await ctx.api().post(ausente).set(painel()).send({})).status).toBe(404);
    expect((await ctx.api().delete(ausente).set(painel())).status).toBe(404);
    await ctx.api().patch(`/aplicativo/${aplicativo.id}`).set(painel()).send({ ativo: false }).expect(200);
    const desligado = await ctx.api().post(caminho).set(painel()).send({});
    expect([desligado.status, desligado.body.codigo]).toEqual([409, 'aplicativo_inativo']);
    expect(await linksDe(aplicativo.id)).toEqual([]);
  });
});

describe('what a portal token opens', () => {
  test('When the token is sent to the subscriber routes, then they answer for its application, and its changes are the application’s', async () => {
    const s = await assinanteComEntrega();
    const portal = auth(s.link.token);
    expect((await ctx.api().get('/entregas').set(portal)).body.itens.map((e: { id: string }) => e.id)).toEqual([
      s.entregaId,
    ]);
    expect((await ctx.api().get(`/entregas/${s.entregaId}`).set(portal)).status).toBe(200);
    expect((await ctx.api().get('/assinaturas').set(portal)).body.total).toBe(1);
    expect((await ctx.api().post(`/entregas/${s.entregaId}/reenviar`).set(portal)).status).toBe(202);
    // A replay of its subscription, as the portal's Reproduzir asks it.
    const reproducao = await ctx
      .api()
      .post(`/assinaturas/${s.assinaturaId}/reproduzir`)
      .set(portal)
      .send({ desde: new Date(Date.now() - HORA_MS).toISOString(), ate: new Date().toISOString() });
    expect({ status: reproducao.status, assinatura_id: reproducao.body.assinatura_id }).toEqual({
      status: 202,
      assinatura_id: s.assinaturaId,
    });
    const criada = await ctx.api().post('/assinaturas').set(portal).send({
      tipo_de_evento_id: s.c.tipo.id,
      versao_do_esquema: 1,
      url_de_destino: 'https://recebedor.example/portal',
    });
    expect(criada.status).toBe(201);
    expect(criada.body).toMatchObject({
      aplicativo_assinante_id: s.assinante.id,
      alterada_por_tipo: 'aplicativo',
      alterada_por: s.assinante.client_id,
    });
    await ctx.api().patch(`/assinaturas/${criada.body.id}`).set(portal).send({ ativa: false }).expect(200);
    await ctx.api().delete(`/assinaturas/${criada.body.id}`).set(portal).expect(204);
  });

  test('When the token is sent to POST /eventos (of a type its application owns), to a panel route or for another application’s things, then 401 or 404 and nothing is written', async () => {
    const s = await assinanteComEntrega();
    const outro = await assinanteComEntrega();
    const doDono = auth((await link(s.c.dono.id)).token);
    const publicacao = await publicar(ctx, (await link(s.c.dono.id)).token, s.c.corpo());
    expect([publicacao.status, publicacao.body.codigo]).toEqual([401, 'token_invalido']);
    expect(await ctx.hub.db.evento.count({ where: { tipoDeEventoId: s.c.tipo.id } })).toBe(1);
    for (const [metodo, path] of [
      ['post', '/evento'],
      ['get', '/assinatura'],
      ['get', `/assinatura/${s.assinaturaId}`],
      ['get', '/entrega'],
      ['get', `/aplicativo/${s.c.dono.id}`],
      ['post', `/aplicativo/${s.c.dono.id}/portal`],
      ['get', `/esquema/${s.c.tipo.nome}/1`],
      ['get', '/tipo-de-evento'],
    ] as const) {
      const response = await ctx
        .api()
        [metodo](path)
        .set(doDono)
        .send(metodo === 'post' ? s.c.corpo() : undefined);
      expect({ path, status: response.status }).toEqual({ path, status: 401 });
    }
    const portal = auth(s.link.token);
    for (const [metodo, path] of [
      ['get', `/entregas/${outro.entregaId}`],
      ['post', `/entregas/${outro.entregaId}/reenviar`],
      ['patch', `/assinaturas/${outro.assinaturaId}`],
      ['delete', `/assinaturas/${outro.assinaturaId}`],
    ] as const) {
      const response = await ctx.api()[metodo](path).set(portal).send({ ativa: false });
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
    }
    expect((await ctx.hub.db.assinatura.findUniqueOrThrow({ where: { id: outro.assinaturaId } })).ativa).toBe(true);
    expect(await ctx.hub.db.linkDoPortal.count({ where: { aplicativoId: s.c.dono.id } })).toBe(2);
  });

  test('When a token is forged, or its application is switched off, then 401 token_invalido or 403 aplicativo_inativo', async () => {
    const s = await assinanteComEntrega();
    const forjado = await ctx
      .api()
      .get('/entregas')
      .set(auth(`portal_${'A'.repeat(43)}`));
    expect([forjado.status, forjado.body.codigo]).toEqual([401, 'token_invalido']);
    await ctx.api().patch(`/aplicativo/${s.assinante.id}`).set(painel()).send({ ativo: false }).expect(200);
    const desligado = await ctx.api().get('/entregas').set(auth(s.link.token));
    expect([desligado.status, desligado.body.codigo]).toEqual([403, 'aplicativo_inativo']);
  });
});

describe('expiry and revocation', () => {
  test('When a link’s expira_em passes, then its token is 401 token_expirado', async () => {
    const aplicativo = await criarAplicativo(ctx);
    const curto = await link(aplicativo.id, { expira_em: new Date(Date.now() + 1500).toISOString() });
    expect((await ctx.api().get('/assinaturas').set(auth(curto.token))).status).toBe(200);
    const recusa = await waitFor(
      async () => {
        const response = await ctx.api().get('/assinaturas').set(auth(curto.token));
        return response.status === 200 ? undefined : response;
      },
      { timeoutMs: 5000, what: 'the link to expire' },
    );
    expect([recusa.status, recusa.body.codigo]).toEqual([401, 'token_expirado']);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(curto.expira_em));
  });

  test('When an operator revokes the links, then every token made so far is 401 at once, another application’s still works, and a new link works', async () => {
    const aplicativo = await criarAplicativo(ctx);
    const outro = await criarAplicativo(ctx);
    const [um, dois, doOutro] = [await link(aplicativo.id), await link(aplicativo.id), await link(outro.id)];
    await ctx.api().delete(`/aplicativo/${aplicativo.id}/portal`).set(painel()).expect(204);
    for (const token of [um.token, dois.token]) {
      const response = await ctx.api().get('/assinaturas').set(auth(token));
      expect([response.status, response.body.codigo]).toEqual([401, 'token_invalido']);
    }
    expect((await ctx.api().get('/assinaturas').set(auth(doOutro.token))).status).toBe(200);
    expect(
      (
        await ctx
          .api()
          .get('/assinaturas')
          .set(auth((await link(aplicativo.id)).token))
      ).status,
    ).toBe(200);
  });
});

import { createHubClient } from '@hub/client';
import {
  auth,
  type Contexto,
  criarAplicativo,
  encerrarContexto,
  iniciarContexto,
} from '@hub/hub-api/src/contexto.test-support';
import { cenario } from '@hub/hub-api/src/features/publicacao/cenario.test-support';

/** @hub/client's own-subscription and portal reads against a real hub-api, with a portal link's token. */
describe('@hub/client: a subscriber’s own subscriptions, through its portal token', () => {
  let ctx: Contexto;
  beforeAll(async () => {
    ctx = await iniciarContexto({ env: { HUB_ASSINATURAS_POR_APLICATIVO: '1' } });
  }, 60_000);
  afterAll(() => encerrarContexto(ctx));

  async function clienteDoPortal() {
    const c = await cenario(ctx);
    const assinante = await criarAplicativo(ctx, 'Assinante');
    const link = await ctx.api().post(`/aplicativo/${assinante.id}/portal`).set(auth(ctx.todas)).send({}).expect(201);
    const sent: Request[] = [];
    const client = createHubClient({
      baseUrl: ctx.hub.url,
      token: () => link.body.token,
      fetch: (input, init) => {
        const request = new Request(input, init);
        sent.push(request.clone());
        return fetch(request);
      },
    });
    return { c, assinante, client, sent };
  }

  test('When the subscriber creates, changes, reads the health of and deletes a subscription, then each call answers as the route does', async () => {
    const { c, assinante, client } = await clienteDoPortal();
    const criada = await client.createAssinatura({
      tipo_de_evento_id: c.tipo.id,
      versao_do_esquema: 1,
      url_de_destino: 'https://recebedor.example/cliente',
    });
    expect(criada).toMatchObject({ aplicativo_assinante_id: assinante.id, alterada_por_tipo: 'aplicativo' });
    const alterada = await client.updateAssinatura(criada.id, { ativa: false, formato: 'cloudevents' });
    expect(alterada).toMatchObject({ ativa: false, formato: 'cloudevents' });
    expect(await client.getSaudeDaAssinatura(criada.id)).toMatchObject({
      assinatura_id: criada.id,
      tentativas_nas_ultimas_24_horas: 0,
    });
    const tipos = await client.listTiposDeEvento({ tamanho: 100 });
    expect(tipos.itens.map((t) => t.id)).toContain(c.tipo.id);
    await client.deleteAssinatura(criada.id);
    expect((await client.listAssinaturas()).total).toBe(0);
    await expect(client.deleteAssinatura(criada.id)).rejects.toMatchObject({ status: 404, attempts: 1 });
  });

  test('When the subscriptions held are at the limit, then createAssinatura throws 429 limite_de_assinaturas at once, without retrying', async () => {
    const { c, client, sent } = await clienteDoPortal();
    const corpo = { tipo_de_evento_id: c.tipo.id, versao_do_esquema: 1, url_de_destino: 'https://recebedor.example/1' };
    await client.createAssinatura(corpo);
    const antes = sent.length;
    await expect(
      client.createAssinatura({ ...corpo, url_de_destino: 'https://recebedor.example/2' }),
    ).rejects.toMatchObject({ status: 429, codigo: 'limite_de_assinaturas', attempts: 1 });
    expect(sent.length - antes).toBe(1);
  });
});

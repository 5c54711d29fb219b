import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { assinar, cenario, publicar } from './cenario.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

/** What identifies a subscriber, where it receives and what it answered: the panel's, never a publisher's. */
const DO_ASSINANTE = ['aplicativo_assinante_id', 'aplicativo_assinante_nome', 'url_de_destino', 'ultimo_erro'];
const ERRO = 'HTTP 500 from https://recebedor.example/segredo?token=abc';

/** A published event with two deliveries, one of which failed once with ERRO. */
async function eventoComFalha() {
  const c = await cenario(ctx);
  const assinaturas = [
    await assinar(ctx, c.tipo.id, 1, { url_de_destino: 'https://recebedor.example/segredo?token=abc' }),
    await assinar(ctx, c.tipo.id),
  ];
  const publicado = await publicar(ctx, c.tokenDoDono, c.corpo(), { 'Idempotency-Key': 'visibilidade-1' });
  expect(publicado.status).toBe(201);
  const falhou = publicado.body.entregas.find((e: { assinatura_id: string }) => e.assinatura_id === assinaturas[0]!.id);
  await ctx.hub.db.entrega.update({
    where: { id: falhou.id },
    data: { situacao: 'aguardando_nova_tentativa', quantidadeDeTentativas: 1, ultimoErro: ERRO },
  });
  return { c, publicado, assinaturas };
}

function semNadaDoAssinante(entregas: Record<string, unknown>[]) {
  expect(entregas).toHaveLength(2);
  for (const entrega of entregas) for (const campo of DO_ASSINANTE) expect(entrega).not.toHaveProperty(campo);
}

describe('what a publishing application sees of the deliveries of its event', () => {
  test("When an application publishes to a type with subscribers, then POST /eventos answers each delivery without the subscriber's id, name, URL and last error; counts and situations stay", async () => {
    const { publicado, assinaturas } = await eventoComFalha();
    semNadaDoAssinante(publicado.body.entregas);
    expect(publicado.body).toMatchObject({ quantidade_de_entregas: 2, entregas_na_fila: 2 });
    expect(publicado.body.entregas.map((e: { assinatura_id: string }) => e.assinatura_id).sort()).toEqual(
      assinaturas.map((a) => a.id).sort(),
    );
    expect(publicado.body.entregas[0]).toMatchObject({ situacao: 'pendente', maximo_de_tentativas: 8 });
  });

  test('When an application reads its event with GET /eventos/{id}, or repeats the publication with its Idempotency-Key, then a failed delivery shows its situation and attempts but not its error, URL or subscriber', async () => {
    const { c, publicado } = await eventoComFalha();
    const lido = await ctx.api().get(`/eventos/${publicado.body.id}`).set(auth(c.tokenDoDono));
    expect(lido.status).toBe(200);
    semNadaDoAssinante(lido.body.entregas);
    expect(lido.text).not.toContain('segredo');
    expect(lido.body.entregas).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ situacao: 'aguardando_nova_tentativa', quantidade_de_tentativas: 1 }),
      ]),
    );
    const repetido = await publicar(ctx, c.tokenDoDono, c.corpo(), { 'Idempotency-Key': 'visibilidade-1' });
    expect(repetido.status).toBe(201);
    expect(repetido.body.id).toBe(publicado.body.id);
    semNadaDoAssinante(repetido.body.entregas);
    expect(repetido.text).not.toContain('segredo');
  });

  test('When the panel reads the same event with GET /evento/{id}, then every delivery carries its subscriber, URL and last error', async () => {
    const { publicado, assinaturas } = await eventoComFalha();
    const lido = await ctx.api().get(`/evento/${publicado.body.id}`).set(auth(ctx.leitor));
    expect(lido.status).toBe(200);
    expect(lido.body.entregas).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          assinatura_id: assinaturas[0]!.id,
          aplicativo_assinante_id: assinaturas[0]!.aplicativo_assinante_id,
          aplicativo_assinante_nome: 'Assinante',
          url_de_destino: 'https://recebedor.example/segredo?token=abc',
          ultimo_erro: ERRO,
        }),
      ]),
    );
  });

  test('When /openapi.json is read, then the Entrega of POST /eventos and GET /eventos/{id} has no subscriber fields and that of the panel routes has them', async () => {
    const { body: openapi } = await ctx.api().get('/openapi.json').expect(200);
    const entrega = (path: string, method: string, status: string) =>
      Object.keys(
        openapi.paths[path][method].responses[status].content['application/json'].schema.properties.entregas.items
          .properties,
      );
    for (const [path, method, status] of [
      ['/eventos', 'post', '201'],
      ['/eventos/{id}', 'get', '200'],
    ] as const) {
      expect(entrega(path, method, status)).toEqual(expect.arrayContaining(['situacao', 'quantidade_de_tentativas']));
      for (const campo of DO_ASSINANTE) expect(entrega(path, method, status)).not.toContain(campo);
    }
    for (const [path, method, status] of [
      ['/evento', 'post', '201'],
      ['/evento/{id}', 'get', '200'],
    ] as const)
      expect(entrega(path, method, status)).toEqual(expect.arrayContaining(DO_ASSINANTE));
  });
});

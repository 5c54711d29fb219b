import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { assinar, cenario, publicar } from './cenario.test-support';
import { observarTrabalhos } from './trabalhos.test-support';

let ctx: Contexto;
let publicados: Awaited<ReturnType<typeof observarTrabalhos>>;
beforeAll(async () => {
  ctx = await iniciarContexto();
  publicados = await observarTrabalhos(ctx.hub);
});

/** How many jobs publication sent for each delivery (once each has arrived). */
const copias = async (ids: string[]) => [...(await publicados.trabalhos(ids)).values()].map((t) => t.length);
afterAll(() => encerrarContexto(ctx));

const chave = (valor: string) => ({ 'idempotency-key': valor });

describe('Idempotency-Key on POST /eventos and POST /evento', () => {
  test('When the same key comes again with the same body, then the first answer again (201, same event) and nothing more is created', async () => {
    const c = await cenario(ctx);
    await assinar(ctx, c.tipo.id);
    const primeira = await publicar(ctx, c.tokenDoDono, c.corpo(), chave('pedido-1:criado'));
    const segunda = await publicar(ctx, c.tokenDoDono, c.corpo(), chave('pedido-1:criado'));
    expect(primeira.status).toBe(201);
    expect(segunda.status).toBe(201);
    expect(segunda.body).toEqual(primeira.body);
    expect(await ctx.hub.db.evento.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(1);
    expect(await ctx.hub.db.entrega.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(1);
  });

  test('When the key is a Structured Field string ("…"), then it is the same key as the bare one', async () => {
    const c = await cenario(ctx);
    const primeira = await publicar(ctx, c.tokenDoDono, c.corpo(), chave('abc'));
    const segunda = await publicar(ctx, c.tokenDoDono, c.corpo(), chave('"abc"'));
    expect(segunda.body.id).toBe(primeira.body.id);
  });

  test('When the same key comes with a different body, then 422 chave_de_idempotencia_reutilizada, stored as refused, and nothing is created', async () => {
    const c = await cenario(ctx);
    await publicar(ctx, c.tokenDoDono, c.corpo(), chave('k-1'));
    const outra = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'pedido-2' }), chave('k-1'));
    expect(outra.status).toBe(422);
    expect(outra.body.codigo).toBe('chave_de_idempotencia_reutilizada');
    expect(await ctx.hub.db.evento.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(1);
    const recusas = await ctx.hub.db.eventoRecusado.findMany({ where: { aplicativoId: c.dono.id } });
    expect(recusas.map((r) => r.codigo)).toEqual(['chave_de_idempotencia_reutilizada']);
  });

  test('When two requests with one key arrive together, then one event is created and both answer it', async () => {
    const c = await cenario(ctx);
    await assinar(ctx, c.tipo.id);
    const respostas = await Promise.all(
      Array.from({ length: 6 }, () => publicar(ctx, c.tokenDoDono, c.corpo(), chave('concorrente'))),
    );
    expect(respostas.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(new Set(respostas.map((r) => r.body.id)).size).toBe(1);
    expect(await ctx.hub.db.evento.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(1);
    expect(await copias([respostas[0]!.body.entregas[0].id])).toEqual([1]);
  });

  test('When keyed publications arrive together, then every distinct key makes one event with its deliveries and jobs, every repeat answers its first, a reused key with another body is 422', async () => {
    const c = await cenario(ctx);
    await assinar(ctx, c.tipo.id);
    await assinar(ctx, c.tipo.id);
    const pedidos = [
      ...Array.from({ length: 30 }, (_, i) => ({ chave: `lote-${i}`, entidade: `pedido-${i}` })),
      ...Array.from({ length: 8 }, () => ({ chave: 'lote-0', entidade: 'pedido-0' })),
      { chave: 'lote-1', entidade: 'outro-corpo' },
    ];
    const respostas = await Promise.all(
      pedidos.map((p) => publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: p.entidade }), chave(p.chave))),
    );
    // The two bodies under 'lote-1' race: the one whose statement runs first makes the event, the other is 422.
    const lote1 = respostas.filter((_, i) => pedidos[i]!.chave === 'lote-1');
    expect(lote1.map((r) => r.status).sort()).toEqual([201, 422]);
    expect(lote1.find((r) => r.status === 422)!.body.codigo).toBe('chave_de_idempotencia_reutilizada');
    const porChave = new Map<string, Set<string>>();
    for (const [i, r] of respostas.entries()) {
      const p = pedidos[i]!;
      if (p.chave === 'lote-1' && r.status === 422) continue;
      expect({ i, status: r.status }).toEqual({ i, status: 201 });
      expect(r.body.entidade_id).toBe(p.entidade);
      porChave.set(p.chave, (porChave.get(p.chave) ?? new Set()).add(r.body.id));
    }
    expect([...porChave.values()].every((ids) => ids.size === 1)).toBe(true);
    expect(await ctx.hub.db.evento.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(30);
    const entregas = await ctx.hub.db.entrega.findMany({ where: { tipoDeEventoId: c.tipo.id }, select: { id: true } });
    expect(entregas).toHaveLength(60);
    expect(await copias(entregas.map((e) => e.id))).toEqual(Array(60).fill(1));
    const chaves = await ctx.hub.db.chaveDeIdempotencia.findMany({ where: { chave: { startsWith: 'lote-' } } });
    expect(chaves).toHaveLength(30);
    const eventos = new Set(
      (await ctx.hub.db.evento.findMany({ where: { tipoDeEventoId: c.tipo.id }, select: { id: true } })).map(
        (e) => e.id,
      ),
    );
    expect(chaves.every((k) => eventos.has(k.eventoId))).toBe(true);
  });

  test('When the key is older than 24 hours, then it no longer counts and a new event is created', async () => {
    const c = await cenario(ctx);
    const primeira = await publicar(ctx, c.tokenDoDono, c.corpo(), chave('antiga'));
    await ctx.hub.db.chaveDeIdempotencia.updateMany({
      where: { chave: 'antiga', eventoId: primeira.body.id },
      data: { criadaEm: new Date(Date.now() - 25 * 3_600_000) },
    });
    const segunda = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'outro' }), chave('antiga'));
    expect(segunda.status).toBe(201);
    expect(segunda.body.id).not.toBe(primeira.body.id);
  });

  test('When the panel and an application use the same key, then they are different scopes', async () => {
    const c = await cenario(ctx);
    const aplicativo = await publicar(ctx, c.tokenDoDono, c.corpo(), chave('mesma'));
    const painel = await ctx
      .api()
      .post('/evento')
      .set({ ...auth(ctx.todas), ...chave('mesma') })
      .send(c.corpo());
    expect(painel.status).toBe(201);
    expect(painel.body.id).not.toBe(aplicativo.body.id);
    const repetida = await ctx
      .api()
      .post('/evento')
      .set({ ...auth(ctx.todas), ...chave('mesma') })
      .send(c.corpo());
    expect(repetida.body.id).toBe(painel.body.id);
  });

  test('When the key is empty, longer than 255 characters or not printable ASCII, then 400 and nothing is created', async () => {
    const c = await cenario(ctx);
    for (const valor of ['', 'x'.repeat(256), 'tab\there']) {
      const response = await publicar(ctx, c.tokenDoDono, c.corpo(), chave(valor));
      expect({ valor, status: response.status, codigo: response.body.codigo }).toEqual({
        valor,
        status: 400,
        codigo: 'chave_de_idempotencia_invalida',
      });
    }
    expect(await ctx.hub.db.evento.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(0);
  });

  test('When /openapi.json is read, then POST /eventos and POST /evento document the optional Idempotency-Key header and no other route does', async () => {
    const { body } = await ctx.api().get('/openapi.json').expect(200);
    const paths = body.paths as Record<string, Record<string, { parameters: { in: string; name: string }[] }>>;
    for (const [path, method] of [
      ['/eventos', 'post'],
      ['/evento', 'post'],
    ] as const) {
      const cabecalhos = paths[path]![method]!.parameters.filter((p) => p.in === 'header');
      expect({ path, cabecalhos }).toEqual({
        path,
        cabecalhos: [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: expect.stringContaining('chave_de_idempotencia_reutilizada'),
            schema: expect.objectContaining({ type: 'string', pattern: expect.any(String) }),
          },
        ],
      });
      // The documented pattern is the one the route enforces.
      const padrao = new RegExp((cabecalhos[0] as unknown as { schema: { pattern: string } }).schema.pattern);
      expect(['k-1', '"k-1"', 'x'.repeat(255)].every((v) => padrao.test(v))).toBe(true);
      expect(['', 'x'.repeat(256), 'tab\there'].some((v) => padrao.test(v))).toBe(false);
    }
    const outros = Object.entries(paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([method, op]) => !(method === 'post' && (path === '/eventos' || path === '/evento')) && op.parameters)
        .flatMap(([method, op]) =>
          op.parameters.filter((p) => p.in === 'header').map((p) => `${method} ${path} ${p.name}`),
        ),
    );
    expect(outros).toEqual([]);
  });
});

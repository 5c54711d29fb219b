import { uuidv7 } from '@hub/database';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { assinar, cenario, publicar } from './cenario.test-support';
import type { Gravacao } from './gravacao';
import { gravadorEmGrupo } from './gravacao-em-grupo';
import { publicacaoRepository } from './publicacao.repository';
import { observarTrabalhos } from './trabalhos.test-support';

let ctx: Contexto;
let publicados: Awaited<ReturnType<typeof observarTrabalhos>>;
beforeAll(async () => {
  ctx = await iniciarContexto();
  publicados = await observarTrabalhos(ctx.hub);
});
afterAll(() => encerrarContexto(ctx));

const db = () => ctx.hub.db;

interface AssinaturaCriada {
  id: string;
  aplicativo_assinante_id: string;
  url_de_destino: string;
}

/** One publication as the service builds it: an event with one delivery and its job. */
function novaGravacao(
  aplicativoId: string,
  assinatura: AssinaturaCriada,
  tipoDeEventoId: string,
  chave?: Gravacao['chave'],
): Gravacao {
  const id = uuidv7();
  const entregaId = uuidv7();
  const agora = new Date();
  return {
    evento: {
      id,
      tipoDeEventoId,
      versaoDoEsquema: 1,
      aplicativoPublicadorId: aplicativoId,
      entidadeId: 'pedido-1',
      ocorridoEm: agora,
      recebidoEm: agora,
      publicadoPeloEmail: null,
      dadosTexto: '{"numero":"A-1","valor":1}',
    },
    entregas: [
      {
        id: entregaId,
        eventoId: id,
        eventoRecebidoEm: agora,
        entidadeId: 'pedido-1',
        assinaturaId: assinatura.id,
        aplicativoAssinanteId: assinatura.aplicativo_assinante_id,
        tipoDeEventoId,
        versaoDoEsquema: 1,
        urlDeDestino: assinatura.url_de_destino,
        maximoDeTentativas: 3,
      },
    ],
    trabalhos: [{ exchange: 'hub.entregas', routingKey: 'entrega.tentar', messageId: entregaId, body: {} }],
    ...(chave ? { chave } : {}),
  };
}

describe('publications written together (group commit)', () => {
  test('When 60 publications of two types arrive at once, then each answer is byte for byte what the publishing application reads back with GET /eventos/{id}, with its own deliveries and delivery jobs', async () => {
    const a = await cenario(ctx);
    const b = await cenario(ctx);
    await assinar(ctx, a.tipo.id);
    await assinar(ctx, a.tipo.id, 1, { maximo_de_tentativas: 2 });
    await assinar(ctx, b.tipo.id);
    const respostas = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const c = i % 2 ? a : b;
        return publicar(
          ctx,
          c.tokenDoDono,
          c.corpo({
            entidade_id: `pedido-${i}`,
            dados: { numero: `N-${i}`, valor: i },
            ocorrido_em: '2031-05-06T07:08:09.123-03:00',
          }),
        );
      }),
    );
    expect(respostas.map((r) => r.status)).toEqual(Array(60).fill(201));
    for (const [i, resposta] of respostas.entries()) {
      const dono = i % 2 ? a : b;
      const lido = await ctx.api().get(`/eventos/${resposta.body.id}`).set(auth(dono.tokenDoDono));
      expect({ i, texto: resposta.text }).toEqual({ i, texto: lido.text });
      expect(resposta.body).toMatchObject({
        entidade_id: `pedido-${i}`,
        dados: { numero: `N-${i}`, valor: i },
        ocorrido_em: '2031-05-06T10:08:09.123Z',
        quantidade_de_entregas: i % 2 ? 2 : 1,
      });
    }
    const entregas = respostas.flatMap((r) => r.body.entregas.map((e: { id: string }) => e.id));
    expect(new Set(entregas).size).toBe(90);
    const jobs = await publicados.trabalhos(entregas);
    expect([...jobs.values()].map((copias) => copias.length)).toEqual(Array(90).fill(1));
    // Sent right after the commit, not through the outbox.
    expect(await db().outbox.count({ where: { messageId: { in: entregas } } })).toBe(0);
  });

  test('When one publication of a batch cannot be written, then it alone fails and the others of the batch are stored', async () => {
    const c = await cenario(ctx);
    const assinatura = await assinar(ctx, c.tipo.id);
    const despachados: string[] = [];
    const gravador = gravadorEmGrupo(
      publicacaoRepository(db(), ctx.hub.sql),
      (t) => despachados.push(...t.map((j) => j.messageId)),
      {
        paralelos: 1,
      },
    );
    const gravacao = (tipoDeEventoId: string) => novaGravacao(c.dono.id, assinatura, tipoDeEventoId);
    // The first goes alone; the next five queue behind it and go as one batch, in which one names
    // a type that does not exist (its foreign key fails the batch's statement).
    const primeira = gravacao(c.tipo.id);
    const lote = [
      gravacao(c.tipo.id),
      gravacao(c.tipo.id),
      gravacao(uuidv7()),
      gravacao(c.tipo.id),
      gravacao(c.tipo.id),
    ];
    const resultados = await Promise.allSettled([primeira, ...lote].map((g) => gravador.gravar(g)));

    expect(resultados.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual([
      true,
      true,
      true,
      'rejected',
      true,
      true,
    ]);
    const ids = [primeira, ...lote].map((g) => g.evento.id);
    const guardados = await db().evento.findMany({ where: { id: { in: ids } }, select: { id: true } });
    expect(guardados.map((e) => e.id).sort()).toEqual(ids.filter((_, i) => i !== 3).sort());
    const entregas = [primeira, ...lote].map((g) => g.entregas[0]!.id);
    expect(await db().entrega.count({ where: { id: { in: entregas } } })).toBe(5);
    // The jobs of the written ones were handed over once committed; the failed one's never.
    expect(despachados.sort()).toEqual(entregas.filter((_, i) => i !== 3).sort());
  });

  test('When keyed and unkeyed publications share a statement, then a key another publication holds writes nothing of its own, and every other is written in the same transaction', async () => {
    const c = await cenario(ctx);
    const assinatura = await assinar(ctx, c.tipo.id);
    const despachados: string[] = [];
    const gravador = gravadorEmGrupo(
      publicacaoRepository(db(), ctx.hub.sql),
      (t) => despachados.push(...t.map((j) => j.messageId)),
      {
        paralelos: 1,
      },
    );
    const chave = (k: string) => ({ escopo: `aplicativo:${c.dono.id}`, chave: k, impressao: 'x' });
    const gravacao = (k?: string) => novaGravacao(c.dono.id, assinatura, c.tipo.id, k ? chave(k) : undefined);
    // The first goes alone and holds its key; the next six queue behind it and go as one statement.
    const primeira = gravacao('k-a');
    const lote = [gravacao('k-a'), gravacao('k-b'), gravacao(), gravacao('k-c'), gravacao(), gravacao('k-d')];
    const escritas = await Promise.all([primeira, ...lote].map((g) => gravador.gravar(g)));
    expect(escritas).toEqual([true, false, true, true, true, true, true]);

    const ids = lote.filter((_, i) => i !== 0).map((g) => g.evento.id);
    const linhas = await db().$queryRaw<{ id: string; xmin: string }[]>`
      select id::text, xmin::text from evento where id = any(${[primeira.evento.id, ...lote.map((g) => g.evento.id)]}::uuid[])`;
    expect(linhas.map((l) => l.id).sort()).toEqual([primeira.evento.id, ...ids].sort());
    expect(new Set(linhas.filter((l) => ids.includes(l.id)).map((l) => l.xmin)).size).toBe(1);
    const perdida = lote[0]!;
    expect(await db().entrega.count({ where: { eventoId: perdida.evento.id } })).toBe(0);
    expect(despachados).not.toContain(perdida.entregas[0]!.id);
    expect(despachados).toHaveLength(6);
    const chaves = await db().chaveDeIdempotencia.findMany({ where: { escopo: `aplicativo:${c.dono.id}` } });
    expect(Object.fromEntries(chaves.map((k) => [k.chave, k.eventoId]))).toEqual({
      'k-a': primeira.evento.id,
      'k-b': lote[1]!.evento.id,
      'k-c': lote[3]!.evento.id,
      'k-d': lote[5]!.evento.id,
    });
  });
});

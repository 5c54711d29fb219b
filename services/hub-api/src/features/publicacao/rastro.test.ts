import { randomBytes } from 'node:crypto';
import type { ConsumeMessage } from '@hub/broker';
import { EXCHANGES, trabalhoDeEntrega } from '@hub/contracts';
import { uniqueName, waitFor } from '@hub/testing';
import { SpanKind } from '@hub/tracing';
import { type ReadableSpan, rastrearEmMemoria } from '@hub/tracing/em-memoria';
import { type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { assinar, cenario, publicar } from './cenario.test-support';

/**
 * Publication's spans with tracing on (docs/decisions/tracing.md), kept in
 * memory by this process: each publication's span under the context its request brought, the
 * group write's batch span (child of the publication that opened the batch, linked both ways to
 * the others in it), and one PRODUCER span per delivery job, whose context the job's message carries.
 */
const spans = rastrearEmMemoria();
let ctx: Contexto;
/** Each delivery job's AMQP headers, by delivery id. */
const cabecalhos = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  ctx = await iniciarContexto();
  const fila = uniqueName('teste.rastro');
  await ctx.hub.broker.declare(async (channel) => {
    await channel.assertQueue(fila, { durable: false, exclusive: true });
    await channel.bindQueue(fila, EXCHANGES.entregas, trabalhoDeEntrega.routingKey);
  });
  await ctx.hub.broker.consume(fila, async (message: ConsumeMessage) => {
    cabecalhos.set(String(message.properties.messageId), message.properties.headers ?? {});
  });
});
afterAll(() => encerrarContexto(ctx));

const traceparentDe = (s: ReadableSpan) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`;

test('When 40 publications arrive at once, then each has its span in its own trace, every batch span is under one of them and linked both ways to the others, and each job carries its PRODUCER span', async () => {
  const c = await cenario(ctx);
  await assinar(ctx, c.tipo.id);
  const enviados = Array.from({ length: 40 }, () => ({
    traceId: randomBytes(16).toString('hex'),
    pai: randomBytes(8).toString('hex'),
  }));
  const respostas = await Promise.all(
    enviados.map((e, i) =>
      publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: `pedido-${i}` }), {
        traceparent: `00-${e.traceId}-${e.pai}-01`,
      }),
    ),
  );
  expect(respostas.map((r) => r.status)).toEqual(enviados.map(() => 201));
  const entregaIds = respostas.map((r) => (r.body as { entregas: { id: string }[] }).entregas[0]!.id);
  await waitFor(() => entregaIds.every((id) => cabecalhos.has(id)), { what: 'every delivery job' });

  const terminados = () => spans.getFinishedSpans();
  await waitFor(() => terminados().filter((s) => s.name === `publish ${EXCHANGES.entregas}`).length >= 40, {
    what: 'the PRODUCER spans',
  });
  const lotes = terminados().filter((s) => s.name === 'publicacao.gravacao_em_grupo');
  // Several publications shared a statement: the batch spans are fewer than the publications.
  expect(lotes.length).toBeLessThan(40);
  expect(lotes.reduce((soma, l) => soma + Number(l.attributes['hub.publicacoes']), 0)).toBe(40);

  respostas.forEach((r, i) => {
    const eventoId = (r.body as { id: string }).id;
    const publicacao = terminados().find((s) => s.name === 'publicacao' && s.attributes['hub.evento_id'] === eventoId);
    expect(publicacao).toBeDefined();
    const p = publicacao!;
    // under the context its request brought, in its own trace
    expect(p.spanContext().traceId).toBe(enviados[i]!.traceId);
    expect(p.parentSpanContext?.spanId).toBe(enviados[i]!.pai);
    // exactly one batch wrote it: it opened it (the batch is its child) or is linked to it, and back
    const abriu = lotes.filter((l) => l.parentSpanContext?.spanId === p.spanContext().spanId);
    const ligado = lotes.filter((l) => l.links.some((k) => k.context.spanId === p.spanContext().spanId));
    expect(abriu.length + ligado.length).toBe(1);
    if (ligado.length === 1) expect(p.links.map((k) => k.context.spanId)).toEqual([ligado[0]!.spanContext().spanId]);
    else expect(abriu[0]!.spanContext().traceId).toBe(enviados[i]!.traceId);
    // its job's message carries its PRODUCER span, the publication's child
    const producer = terminados().find((s) => s.attributes['messaging.message.id'] === entregaIds[i]);
    expect(producer).toMatchObject({ kind: SpanKind.PRODUCER });
    expect(producer!.parentSpanContext?.spanId).toBe(p.spanContext().spanId);
    expect(cabecalhos.get(entregaIds[i]!)?.traceparent).toBe(traceparentDe(producer!));
  });
  // at least one batch held more than one publication, so the links were exercised
  expect(lotes.some((l) => l.links.length > 0)).toBe(true);
});

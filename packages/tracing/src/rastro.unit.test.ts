import { exportacaoPedida } from './iniciar';
import { comRastro, iniciarTrecho, novoRastro, publicando, rastroDe, rastroDeSaida, traceparentValido } from './rastro';

// The SDK is not started in these tests: what they check is the path every process takes when no
// exporter is configured (the context carried as it came, no span made).

const VALIDO = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('traceparent as W3C Trace Context reads it', () => {
  test('When a traceparent is well formed, then it is kept (lower-cased, trimmed)', () => {
    expect(traceparentValido(VALIDO)).toBe(VALIDO);
    expect(traceparentValido(` ${VALIDO.toUpperCase()} `)).toBe(VALIDO);
    expect(traceparentValido(Buffer.from(VALIDO))).toBe(VALIDO);
    expect(traceparentValido([VALIDO, 'x'])).toBe(VALIDO);
  });

  test('When a later version adds fields, then it is kept; version 00 with extra fields is not', () => {
    expect(traceparentValido(`01-${VALIDO.slice(3)}-extra`)).toBe(`01-${VALIDO.slice(3)}-extra`);
    expect(traceparentValido(`${VALIDO}-extra`)).toBeUndefined();
  });

  test('When a later version’s fields hold a space, a tab or a byte past ASCII, then it is not passed on', () => {
    for (const campos of ['-a b', '-a\tb', '-\u00ff', '-caf\u00e9', '-\u007f'])
      expect({ campos, rastro: rastroDe({ traceparent: `01-${VALIDO.slice(3)}${campos}` }) }).toEqual({
        campos,
        rastro: undefined,
      });
    expect(traceparentValido(`01-${VALIDO.slice(3)}-a=b;c~d`)).toBe(`01-${VALIDO.slice(3)}-a=b;c~d`);
  });

  test.each([
    ['version ff', `ff-${VALIDO.slice(3)}`],
    ['a zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['a zero parent id', `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`],
    ['a short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['not hex', '00-4bf92f3577b34da6a3ce929d0e0e473z-00f067aa0ba902b7-01'],
    ['empty', ''],
    ['a number', 42],
  ])('When a traceparent has %s, then it is not passed on', (_, valor) => {
    expect(traceparentValido(valor)).toBeUndefined();
    expect(rastroDe({ traceparent: valor })).toBeUndefined();
  });
});

describe('The context carried when nothing records', () => {
  test('When headers carry a context, then rastroDe gives traceparent with its tracestate', () => {
    expect(rastroDe({ traceparent: VALIDO, tracestate: 'a=1', outro: 'x' })).toEqual({
      traceparent: VALIDO,
      tracestate: 'a=1',
    });
    expect(rastroDe({ traceparent: VALIDO })).toEqual({ traceparent: VALIDO });
    // a tracestate that is not printable ASCII, or too long, is dropped; the traceparent stays
    expect(rastroDe({ traceparent: VALIDO, tracestate: 'a=ç' })).toEqual({ traceparent: VALIDO });
    expect(rastroDe({ traceparent: VALIDO, tracestate: `a=${'x'.repeat(600)}` })).toEqual({ traceparent: VALIDO });
    expect(rastroDe(undefined)).toBeUndefined();
    expect(rastroDe(null)).toBeUndefined();
  });

  test('When a trace starts, then it has fresh random ids and is not sampled', () => {
    const a = novoRastro().traceparent;
    const b = novoRastro().traceparent;
    expect(a).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(traceparentValido(a)).toBe(a);
    expect(a).not.toBe(b);
  });

  test('When the gateway forwards a request, then the caller context goes on as it came, or a new trace starts', () => {
    expect(rastroDeSaida({ traceparent: VALIDO, tracestate: 'a=1' })).toEqual({
      traceparent: VALIDO,
      tracestate: 'a=1',
    });
    const novo = rastroDeSaida({ traceparent: 'garbage' });
    expect(novo.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  });

  test('When headers get a context, then any they had is replaced and the rest kept', () => {
    expect(comRastro({ a: 1, traceparent: 'old', tracestate: 'old' }, { traceparent: VALIDO })).toEqual({
      a: 1,
      traceparent: VALIDO,
    });
    expect(comRastro(undefined, { traceparent: VALIDO })).toEqual({ traceparent: VALIDO });
    expect(comRastro({ a: 1 }, undefined)).toEqual({ a: 1 });
    expect(comRastro(null, undefined)).toBeUndefined();
  });

  test('When a span is begun by hand, then it makes no span and carries its parent context unchanged', () => {
    const trecho = iniciarTrecho('x', { pai: { traceparent: VALIDO }, links: [{ traceparent: VALIDO }] });
    expect(trecho.span).toBeUndefined();
    expect(trecho.rastro).toEqual({ traceparent: VALIDO });
    expect(trecho.ativo(() => 7)).toBe(7);
    trecho.fim(new Error('ignored'));
    expect(iniciarTrecho('y').rastro).toBeUndefined();
    expect(iniciarTrecho('z', { pai: { traceparent: 'broken' } }).rastro).toBeUndefined();
  });

  test('When a message is published, then its headers go as they are', async () => {
    const cabecalhos = { traceparent: VALIDO, 'hub-x': 1 };
    const enviados: unknown[] = [];
    await publicando('publish x', cabecalhos, {}, async (h) => void enviados.push(h));
    await publicando('publish x', null, {}, async (h) => void enviados.push(h));
    expect(enviados).toEqual([cabecalhos, undefined]);
  });
});

describe('Whether the SDK starts: only when an exporter is asked for', () => {
  test.each([
    [{}, false],
    [{ OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_TRACES_EXPORTER: ' ' }, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none,console' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'TRUE' }, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'false' }, true],
  ])('When the environment is %j, then the SDK starts: %s', (env, esperado) => {
    expect(exportacaoPedida(env as NodeJS.ProcessEnv)).toBe(esperado);
  });
});

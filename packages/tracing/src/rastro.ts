import { randomBytes } from 'node:crypto';
import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { rastreamentoLigado } from './estado';

/**
 * A trace context as headers (W3C `traceparent`, with `tracestate` when there is one, or whatever
 * OTEL_PROPAGATORS writes when the SDK runs): what a request or a message carries on.
 */
export type Rastro = Readonly<Record<string, string>>;

/** Headers of a request or a message: string values are read, anything else is ignored. */
export type Portador = Readonly<Record<string, unknown>>;

export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

/**
 * version-traceid-parentid-flags; a later version may add fields after a dash (W3C Trace Context).
 * Those fields are passed on to every subscriber as they came, so they are held to visible ASCII
 * (no space, tab or Latin-1 byte a publisher could have a subscriber's header carry).
 */
const FORMATO = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?$/;
const TRACESTATE_VALIDO = /^[\x20-\x7e]+$/;
const ZEROS_32 = '0'.repeat(32);
const ZEROS_16 = '0'.repeat(16);

const texto = (valor: unknown): string | undefined => {
  const v = Array.isArray(valor) ? valor[0] : valor;
  if (typeof v === 'string') return v;
  return Buffer.isBuffer(v) ? v.toString('latin1') : undefined;
};

/** A `traceparent` value that may be passed on (valid by the W3C rules), or undefined. */
export function traceparentValido(valor: unknown): string | undefined {
  const t = texto(valor)?.trim().toLowerCase();
  if (!t || t.length > 512) return undefined;
  const partes = FORMATO.exec(t);
  if (!partes || partes[1] === 'ff' || partes[2] === ZEROS_32 || partes[3] === ZEROS_16) return undefined;
  if (partes[1] === '00' && partes[5] !== undefined) return undefined;
  return t;
}

/** The W3C trace context of these headers, or undefined when they carry none (or a broken one). */
export function rastroDe(cabecalhos: Portador | null | undefined): Rastro | undefined {
  if (!cabecalhos) return undefined;
  const traceparent = traceparentValido(cabecalhos[TRACEPARENT]);
  if (!traceparent) return undefined;
  // Printable ASCII only, as W3C allows (anything else could not be sent on as a header), at most 512.
  const tracestate = texto(cabecalhos[TRACESTATE])?.trim();
  return tracestate && tracestate.length <= 512 && TRACESTATE_VALIDO.test(tracestate)
    ? { traceparent, tracestate }
    : { traceparent };
}

/** Random bytes drawn 256 ids at a time: one call to the CSPRNG per id cost more than the rest of a hop. */
const POR_ID = 24;
let reserva = Buffer.alloc(0);
let usados = 0;

/** A new trace: random ids, not sampled (nothing recorded it). */
export function novoRastro(): Rastro {
  if (usados + POR_ID > reserva.length) {
    reserva = randomBytes(POR_ID * 256);
    usados = 0;
  }
  const ids = reserva.toString('hex', usados, usados + POR_ID);
  usados += POR_ID;
  return { traceparent: `00-${ids.slice(0, 32)}-${ids.slice(32)}-00` };
}

/** The headers with this trace context in place of any they had. */
export function comRastro<T extends Record<string, unknown>>(
  cabecalhos: T | null | undefined,
  rastro: Rastro | undefined,
): T | undefined {
  if (!rastro) return cabecalhos ?? undefined;
  const { [TRACEPARENT]: _p, [TRACESTATE]: _s, ...resto } = (cabecalhos ?? {}) as Record<string, unknown>;
  return { ...resto, ...rastro } as unknown as T;
}

const tracer = () => trace.getTracer('@hub/tracing');

function injetar(ctx: Context): Rastro | undefined {
  const portador: Record<string, string> = {};
  propagation.inject(ctx, portador);
  return portador[TRACEPARENT] || Object.keys(portador).length > 0 ? portador : undefined;
}

/**
 * The context a request sends on to the next service: the active span's when spans are recorded
 * (the HTTP instrumentation's server span), otherwise the incoming one as it came, or a new trace
 * when it brought none. The gateway's proxy uses it (its headers are a raw array, which the
 * instrumentation does not handle).
 */
export function rastroDeSaida(entrada: Portador): Rastro {
  if (rastreamentoLigado()) {
    const ativo = context.active();
    if (trace.getSpan(ativo)?.spanContext().traceId) {
      const r = injetar(ativo);
      if (r) return r;
    }
  }
  return rastroDe(entrada) ?? novoRastro();
}

/** A span begun by hand, or, when nothing is recorded, the context it was given, passed on as is. */
export interface Trecho {
  /** What to send on: this span's context when recording, otherwise the parent's unchanged. */
  readonly rastro: Rastro | undefined;
  /** The span itself, when recorded. */
  readonly span: Span | undefined;
  /** Runs `fn` with this span active: what is instrumented inside (a query, a POST) becomes its child. */
  ativo<T>(fn: () => T): T;
  /** Links this span to another (a publication to its batch; an attempt to the one before). */
  ligar(outro: Trecho | Rastro | undefined): void;
  atributos(atributos: Attributes): void;
  /** Ends it; an error (or a message) marks it failed. */
  fim(erro?: unknown): void;
}

class Inerte implements Trecho {
  readonly span = undefined;
  constructor(readonly rastro: Rastro | undefined) {}
  ativo<T>(fn: () => T): T {
    return fn();
  }
  ligar(): void {}
  atributos(): void {}
  fim(): void {}
}

const SEM_RASTRO = new Inerte(undefined);

const contextoDe = (rastro: Portador) => propagation.extract(ROOT_CONTEXT, rastro);

function linkDe(outro: Trecho | Rastro | undefined): Link | undefined {
  if (!outro) return undefined;
  const spanContext =
    'fim' in outro && typeof outro.fim === 'function'
      ? (outro as Trecho).span?.spanContext()
      : trace.getSpanContext(contextoDe(outro as Rastro));
  return spanContext && trace.isSpanContextValid(spanContext) ? { context: spanContext } : undefined;
}

class Gravado implements Trecho {
  readonly rastro: Rastro | undefined;
  private readonly contexto: Context;
  constructor(
    readonly span: Span,
    pai: Context,
  ) {
    this.contexto = trace.setSpan(pai, span);
    this.rastro = injetar(this.contexto);
  }
  ativo<T>(fn: () => T): T {
    return context.with(this.contexto, fn);
  }
  ligar(outro: Trecho | Rastro | undefined): void {
    const link = linkDe(outro);
    if (link) this.span.addLink(link);
  }
  atributos(atributos: Attributes): void {
    this.span.setAttributes(atributos);
  }
  fim(erro?: unknown): void {
    if (erro !== undefined) {
      const mensagem = erro instanceof Error ? erro.message : String(erro);
      if (erro instanceof Error) this.span.recordException(erro);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: mensagem.slice(0, 500) });
    }
    this.span.end();
  }
}

export interface OpcoesDoTrecho {
  tipo?: SpanKind;
  /** The parent: the context these headers carry. */
  pai?: Portador | null;
  /** Prefer the active span as the parent when there is one (code running inside a request). */
  herdarAtivo?: boolean;
  links?: (Trecho | Rastro | undefined)[];
  atributos?: Attributes;
}

/**
 * Begins a span by hand where no instrumentation makes one (docs/decisions/tracing.md). When nothing is recorded it costs nothing: what it gives carries the parent's
 * context (the `pai` headers' W3C context) on as it came.
 */
export function iniciarTrecho(nome: string, opcoes: OpcoesDoTrecho = {}): Trecho {
  if (!rastreamentoLigado()) {
    const rastro = rastroDe(opcoes.pai);
    return rastro ? new Inerte(rastro) : SEM_RASTRO;
  }
  const ativo = context.active();
  const pai = opcoes.herdarAtivo && trace.getSpan(ativo) ? ativo : opcoes.pai ? contextoDe(opcoes.pai) : ROOT_CONTEXT;
  const links = opcoes.links?.map(linkDe).filter((l): l is Link => l !== undefined);
  const span = tracer().startSpan(
    nome,
    {
      kind: opcoes.tipo ?? SpanKind.INTERNAL,
      ...(opcoes.atributos ? { attributes: opcoes.atributos } : {}),
      ...(links && links.length > 0 ? { links } : {}),
    },
    pai,
  );
  return new Gravado(span, pai);
}

/**
 * A message published with its own PRODUCER span (when recording): `enviar` gets the headers with
 * that span's context in them; when nothing is recorded, the headers as they are (their context
 * travels unchanged).
 */
export async function publicando<T>(
  nome: string,
  cabecalhos: Record<string, unknown> | null | undefined,
  atributos: Attributes,
  enviar: (cabecalhos: Record<string, unknown> | undefined) => Promise<T>,
): Promise<T> {
  if (!rastreamentoLigado()) return enviar(cabecalhos ?? undefined);
  const trecho = iniciarTrecho(nome, { tipo: SpanKind.PRODUCER, pai: cabecalhos, atributos });
  try {
    const resultado = await enviar(comRastro(cabecalhos, trecho.rastro));
    trecho.fim();
    return resultado;
  } catch (error) {
    trecho.fim(error);
    throw error;
  }
}

export { SpanKind };

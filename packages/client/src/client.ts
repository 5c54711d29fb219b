import createClient from 'openapi-fetch';
import { HubError, HubNetworkError, type Problema } from './errors.js';
import type { paths } from './generated/schema.js';

export type { Problema };
/** The body of POST /eventos. */
export type EventoCriar = paths['/eventos']['post']['requestBody']['content']['application/json'];
/** An event as the hub answers it (POST /eventos, GET /eventos/{id}). */
export type Evento = paths['/eventos']['post']['responses'][201]['content']['application/json'];

/** The filters and page of GET /entregas: situacao, assinatura_id, tipo_de_evento_id, evento_id, desde, ate. */
export type FiltroDeEntregas = NonNullable<paths['/entregas']['get']['parameters']['query']>;
/** A page of the application's deliveries (GET /entregas). */
export type PaginaDeEntregas = paths['/entregas']['get']['responses'][200]['content']['application/json'];
/** One delivery with its attempts (GET /entregas/{id}, POST /entregas/{id}/reenviar). */
export type Entrega = paths['/entregas/{id}']['get']['responses'][200]['content']['application/json'];
/** The filters and page of GET /assinaturas: tipo_de_evento_id, versao_do_esquema, ativa. */
export type FiltroDeAssinaturas = NonNullable<paths['/assinaturas']['get']['parameters']['query']>;
/** A page of the application's subscriptions (GET /assinaturas). */
export type PaginaDeAssinaturas = paths['/assinaturas']['get']['responses'][200]['content']['application/json'];
/** The body of POST /assinaturas/{id}/reproduzir: the range of receipt, inclusive, and incluir_entregues. */
export type ReproducaoCriar =
  paths['/assinaturas/{id}/reproduzir']['post']['requestBody']['content']['application/json'];
/** A replay, with its progress (criadas, reenviadas, ignoradas). */
export type Reproducao = paths['/assinaturas/{id}/reproduzir']['post']['responses'][202]['content']['application/json'];
export type PaginaDeReproducoes =
  paths['/assinaturas/{id}/reproducoes']['get']['responses'][200]['content']['application/json'];

/** The body of POST /assinaturas: the panel's subscription without the subscriber (the caller is). */
export type AssinaturaCriar = paths['/assinaturas']['post']['requestBody']['content']['application/json'];
/** The body of PATCH /assinaturas/{id}: what changes (url_de_destino, filtro, ativa, entrega_ordenada, formato…). */
export type AssinaturaAtualizar = paths['/assinaturas/{id}']['patch']['requestBody']['content']['application/json'];
/** One subscription of the application (POST /assinaturas, PATCH /assinaturas/{id}). */
export type Assinatura = paths['/assinaturas']['post']['responses'][201]['content']['application/json'];
/** A page of the active event types with their versions, schemas and example bodies (GET /tipos-de-evento). */
export type PaginaDeTiposDeEvento = paths['/tipos-de-evento']['get']['responses'][200]['content']['application/json'];
/** A subscription's last 24 hours and its destination's state (GET /assinaturas/{id}/saude). */
export type SaudeDaAssinatura =
  paths['/assinaturas/{id}/saude']['get']['responses'][200]['content']['application/json'];

/** Gives the bearer token; called before every request (every retry too), so it may refresh it. */
export type TokenProvider = () => string | Promise<string>;

export interface RetryOptions {
  /** Requests in all, the first included (default 5). */
  maxAttempts?: number;
  /** The first backoff's ceiling; each next one doubles it (default 200 ms). */
  baseDelayMs?: number;
  /** The largest backoff (default 10 s). */
  maxDelayMs?: number;
  /** The longest Retry-After honoured; a longer one is cut to it (default 60 s). */
  maxRetryAfterMs?: number;
}

export interface HubClientOptions {
  /** The gateway, e.g. `https://hub.example.com`. */
  baseUrl: string;
  token: TokenProvider;
  retry?: RetryOptions;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: typeof fetch;
  /** Makes the Idempotency-Key of a publish (default: crypto.randomUUID). */
  idempotencyKey?: () => string;
  /** How to wait between attempts (default: setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1) for the jitter (default: Math.random). */
  random?: () => number;
}

export interface PublishOptions {
  /** Your own key, to make a publish idempotent across restarts of your process; one is made otherwise. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface HubClient {
  /**
   * POST /eventos. Sends an Idempotency-Key (the same on every retry, so a retried publication is
   * accepted once); retries 5xx, 429 and network errors with exponential backoff and full jitter
   * (429/503 after Retry-After), never a 4xx. Throws HubError (problem+json) or HubNetworkError.
   */
  publish(evento: EventoCriar, options?: PublishOptions): Promise<Evento>;
  /** GET /eventos/{id}: one event of the application of the token, with its deliveries. */
  getEvento(id: string, options?: { signal?: AbortSignal }): Promise<Evento>;
  /**
   * GET /entregas: a page of the deliveries of the subscriptions of the application of the token,
   * newest first (an assinatura_id not its own: HubError 404).
   */
  listEntregas(filtro?: FiltroDeEntregas, options?: { signal?: AbortSignal }): Promise<PaginaDeEntregas>;
  /** GET /entregas/{id}: one delivery of the application of the token, with its attempts. */
  getEntrega(id: string, options?: { signal?: AbortSignal }): Promise<Entrega>;
  /**
   * POST /entregas/{id}/reenviar: a new cycle for one delivery of the application of the token.
   * Retried only on 429 and 503 (the hub did nothing); a 5xx or a network error is thrown at once,
   * since the resend may have happened: read the delivery to know (a second resend of a delivery
   * already on its new cycle is 409 entrega_em_andamento).
   */
  reenviarEntrega(id: string, options?: { signal?: AbortSignal }): Promise<Entrega>;
  /** GET /assinaturas: a page of the subscriptions of the application of the token. */
  listAssinaturas(filtro?: FiltroDeAssinaturas, options?: { signal?: AbortSignal }): Promise<PaginaDeAssinaturas>;
  /**
   * POST /assinaturas/{id}/reproduzir: a replay of the stored events received in [desde, ate] to a
   * subscription of the application of the token. Retried only on 429 and 503 (the hub did nothing);
   * a replay asked twice creates nothing the second time, but it is another replay to follow.
   */
  reproduzirAssinatura(id: string, corpo: ReproducaoCriar, options?: { signal?: AbortSignal }): Promise<Reproducao>;
  /** GET /assinaturas/{id}/reproducoes: the replays of a subscription of the application of the token, newest first, with their progress. */
  listReproducoes(
    id: string,
    pagina?: { pagina?: number; tamanho?: number },
    options?: { signal?: AbortSignal },
  ): Promise<PaginaDeReproducoes>;
  /**
   * POST /assinaturas: subscribes the application of the token (every rule of the panel's applies).
   * Like the writes below, retried only on 503 and on 429 muitas_requisicoes (after Retry-After);
   * 429 limite_de_assinaturas (the subscriptions held) is thrown at once: waiting does not change it.
   */
  createAssinatura(assinatura: AssinaturaCriar, options?: { signal?: AbortSignal }): Promise<Assinatura>;
  /** PATCH /assinaturas/{id}: changes one of the application's subscriptions (another's: HubError 404). */
  updateAssinatura(id: string, mudanca: AssinaturaAtualizar, options?: { signal?: AbortSignal }): Promise<Assinatura>;
  /** DELETE /assinaturas/{id}: deletes one of the application's subscriptions. */
  deleteAssinatura(id: string, options?: { signal?: AbortSignal }): Promise<void>;
  /** GET /tipos-de-evento: the event types the application may subscribe to. */
  listTiposDeEvento(
    pagina?: { pagina?: number; tamanho?: number },
    options?: { signal?: AbortSignal },
  ): Promise<PaginaDeTiposDeEvento>;
  /** GET /assinaturas/{id}/saude: attempts and failures of 24 h, and the destination's circuit and latency. */
  getSaudeDaAssinatura(id: string, options?: { signal?: AbortSignal }): Promise<SaudeDaAssinatura>;
}

const RETRIED = (status: number) => status === 429 || status >= 500;
/** What a request that changes something retries when it may not repeat itself: the hub's "come back later". */
const ONLY_WHEN_NOTHING_DONE = (status: number) => status === 429 || status === 503;

/** Refusals that no wait changes, whatever their status. */
const FINAL = new Set(['limite_de_assinaturas']);

/** Retry-After in milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function createHubClient(options: HubClientOptions): HubClient {
  const retry = {
    maxAttempts: Math.max(1, options.retry?.maxAttempts ?? 5),
    baseDelayMs: options.retry?.baseDelayMs ?? 200,
    maxDelayMs: options.retry?.maxDelayMs ?? 10_000,
    maxRetryAfterMs: options.retry?.maxRetryAfterMs ?? 60_000,
  };
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const newKey = options.idempotencyKey ?? (() => globalThis.crypto.randomUUID());
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use({
    async onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${await options.token()}`);
      return request;
    },
  });

  const backoff = (attempt: number) => random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));

  /** Sends until a success, a 4xx, or the attempts run out. */
  async function send<T>(
    call: () => Promise<{ data?: T; error?: unknown; response: Response }>,
    signal?: AbortSignal,
    repeatable = true,
  ): Promise<T> {
    const retried = repeatable ? RETRIED : ONLY_WHEN_NOTHING_DONE;
    for (let attempt = 1; ; attempt++) {
      let wait: number;
      try {
        const { data, error, response } = await call();
        if (response.ok) return data as T;
        const problem = error && typeof error === 'object' ? (error as Partial<Problema>) : undefined;
        if (!retried(response.status) || FINAL.has(problem?.codigo ?? '') || attempt >= retry.maxAttempts)
          throw new HubError(response.status, problem, attempt);
        const after = retryAfterMs(response.headers.get('retry-after'));
        wait = after === undefined ? backoff(attempt) : Math.min(after, retry.maxRetryAfterMs);
      } catch (error) {
        if (error instanceof HubError || signal?.aborted) throw error;
        if (!repeatable || attempt >= retry.maxAttempts) throw new HubNetworkError(attempt, error);
        wait = backoff(attempt);
      }
      await sleep(wait);
      signal?.throwIfAborted();
    }
  }

  return {
    publish(evento, publishOptions = {}) {
      const key = publishOptions.idempotencyKey ?? newKey();
      return send(
        () =>
          client.POST('/eventos', {
            body: evento,
            headers: { 'idempotency-key': key },
            signal: publishOptions.signal,
          }),
        publishOptions.signal,
      );
    },
    getEvento(id, getOptions = {}) {
      return send(
        () => client.GET('/eventos/{id}', { params: { path: { id } }, signal: getOptions.signal }),
        getOptions.signal,
      );
    },
    listEntregas(filtro = {}, { signal } = {}) {
      return send(() => client.GET('/entregas', { params: { query: filtro }, signal }), signal);
    },
    getEntrega(id, { signal } = {}) {
      return send(() => client.GET('/entregas/{id}', { params: { path: { id } }, signal }), signal);
    },
    reenviarEntrega(id, { signal } = {}) {
      return send(() => client.POST('/entregas/{id}/reenviar', { params: { path: { id } }, signal }), signal, false);
    },
    listAssinaturas(filtro = {}, { signal } = {}) {
      return send(() => client.GET('/assinaturas', { params: { query: filtro }, signal }), signal);
    },
    reproduzirAssinatura(id, corpo, { signal } = {}) {
      return send(
        () => client.POST('/assinaturas/{id}/reproduzir', { params: { path: { id } }, body: corpo, signal }),
        signal,
        false,
      );
    },
    listReproducoes(id, pagina = {}, { signal } = {}) {
      return send(
        () => client.GET('/assinaturas/{id}/reproducoes', { params: { path: { id }, query: pagina }, signal }),
        signal,
      );
    },
    createAssinatura(assinatura, { signal } = {}) {
      return send(() => client.POST('/assinaturas', { body: assinatura, signal }), signal, false);
    },
    updateAssinatura(id, mudanca, { signal } = {}) {
      return send(
        () => client.PATCH('/assinaturas/{id}', { params: { path: { id } }, body: mudanca, signal }),
        signal,
        false,
      );
    },
    async deleteAssinatura(id, { signal } = {}) {
      await send(() => client.DELETE('/assinaturas/{id}', { params: { path: { id } }, signal }), signal, false);
    },
    listTiposDeEvento(query = {}, { signal } = {}) {
      return send(() => client.GET('/tipos-de-evento', { params: { query }, signal }), signal);
    },
    getSaudeDaAssinatura(id, { signal } = {}) {
      return send(() => client.GET('/assinaturas/{id}/saude', { params: { path: { id } }, signal }), signal);
    },
  };
}

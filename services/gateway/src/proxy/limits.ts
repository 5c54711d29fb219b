import { AdaptiveLimit, AppError } from '@hub/http';
import type { Request, RequestHandler, Response } from 'express';
import { type Upstream, type UpstreamName, upstreamOf } from '../routes';

/**
 * Publications the gateway lets go to one hub-api instance at once however slow they are answered:
 * enough to keep it at its rate on a slow day, so the publication limit never starves it.
 */
const PUBLICACOES_MIN = 16;
/** POST /eventos (and POST /evento), in any case, with or without a trailing slash, as hub-api routes them. */
const PUBLICACAO = /^\/eventos?\/?$/i;
const ehPublicacao = (req: Request) => req.method === 'POST' && PUBLICACAO.test(req.path);

/**
 * Of a service's slots, the share that requests whose bodies are still streaming in may hold at once
 * (bodies over INTEIRO_ATE go to the service as they come): clients uploading large bodies slowly,
 * one application's say, never hold every slot, and publications keep the rest.
 */
const STREAMING_SHARE = 0.25;

/** As many requests to the service under way as the gateway lets wait: refused at once, nothing sent. */
export const overloaded = (name: string, limit: number) =>
  new AppError(
    503,
    'sobrecarregado',
    `${limit} requests to the ${name} service are under way at this gateway, as many as it answers in time; try again after Retry-After`,
    undefined,
    { 'Retry-After': '1' },
  );

const streamingFull = (name: string, limit: number) =>
  new AppError(
    503,
    'sobrecarregado',
    `${limit} requests are streaming their bodies to the ${name} service at this gateway, as many as may hold its slots at once; try again after Retry-After`,
    undefined,
    { 'Retry-After': '1' },
  );

export interface LimitsOptions {
  upstreams: Record<UpstreamName, Upstream>;
  /** Requests under way at once to one service, per instance of it (GATEWAY_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** GATEWAY_TARGET_LATENCY, in ms. */
  targetMs: number;
  /** GATEWAY_PUBLICATION_TARGET_LATENCY, in ms (at most `targetMs`). */
  publicationTargetMs?: number;
}

/**
 * The bounds on what the gateway lets wait for a service (docs/decisions/overload-refused-fast.md):
 * one AdaptiveLimit per service, and publications (hub-api's short, high-volume requests) under a
 * second one of their own, so a slow panel read never shrinks their limit, nor a publication backlog
 * the panel's. A request takes a slot of each limit it falls under, or of none.
 */
export function createLimits(options: LimitsOptions) {
  const porServico = new Map<UpstreamName, AdaptiveLimit>();
  for (const [name, upstream] of Object.entries(options.upstreams) as [UpstreamName, Upstream][])
    porServico.set(
      name,
      new AdaptiveLimit({ max: options.maxInFlight * upstream.urls.length, targetMs: options.targetMs }),
    );
  const streaming = new Map<UpstreamName, { underWay: number; max: number }>();
  for (const [name, upstream] of Object.entries(options.upstreams) as [UpstreamName, Upstream][])
    streaming.set(name, {
      underWay: 0,
      max: Math.max(1, Math.floor(options.maxInFlight * upstream.urls.length * STREAMING_SHARE)),
    });
  const instancias = options.upstreams['hub-api'].urls.length;
  const publicacoes = new AdaptiveLimit({
    max: options.maxInFlight * instancias,
    min: PUBLICACOES_MIN * instancias,
    targetMs: Math.min(options.publicationTargetMs ?? options.targetMs, options.targetMs),
  });
  const limitsOf = (name: UpstreamName, req: Request): AdaptiveLimit[] =>
    name === 'hub-api' && ehPublicacao(req) ? [porServico.get(name)!, publicacoes] : [porServico.get(name)!];

  return {
    /**
     * A slot of each limit of the request, given back when its answer closes (with how long the
     * service took, when it answered); or, when one is full, the refusal (503 sobrecarregado) and no slot.
     */
    take(
      name: UpstreamName,
      req: Request,
      res: Response,
      answeredInMs: () => number | undefined,
      /** The body goes to the service as it comes: one of the service's streaming share too, until it is all here. */
      streamed = false,
    ): AppError | undefined {
      const uploads = streaming.get(name)!;
      if (streamed && uploads.underWay >= uploads.max) return streamingFull(name, uploads.max);
      const own = limitsOf(name, req);
      for (let i = 0; i < own.length; i += 1) {
        if (own[i]!.acquire()) continue;
        for (let j = 0; j < i; j += 1) own[j]!.release(undefined);
        return overloaded(name, own[i]!.limit);
      }
      res.once('close', () => {
        for (const limit of own) limit.release(answeredInMs());
      });
      if (streamed) holdStreaming(uploads, req, res);
      return undefined;
    },

    /** The refusal of a request whose body the gateway had no room to hold. */
    refusalOf: (name: UpstreamName, req: Request) => overloaded(name, limitsOf(name, req).at(-1)!.limit),

    /**
     * Ahead of everything costly (the caller's token, its rate limit, its body): a request for a
     * service whose limit is full is refused at once, so that under an overload a refusal costs the
     * gateway as little as it can. It takes no slot: one that passes may still be refused later.
     */
    refuseEarly: (): RequestHandler => (req, _res, next) => {
      const name = upstreamOf(req.path);
      if (!name) return next();
      const cheio = limitsOf(name, req).find((limit) => limit.underWay >= limit.limit);
      next(cheio ? overloaded(name, cheio.limit) : undefined);
    },
  };
}

/** One of the streaming share, until the body is all here or the exchange ends, whichever is first. */
function holdStreaming(uploads: { underWay: number }, req: Request, res: Response): void {
  uploads.underWay += 1;
  let held = true;
  const done = () => {
    if (!held) return;
    held = false;
    uploads.underWay -= 1;
    req.off('end', done);
    res.off('close', done);
  };
  req.once('end', done);
  res.once('close', done);
}

export type GatewayLimits = ReturnType<typeof createLimits>;

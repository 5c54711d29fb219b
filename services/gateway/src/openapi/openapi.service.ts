import type { Ambiente } from '@hub/config';
import { mergeOpenApi, type OpenApiDocument } from '@hub/http';
import type { Logger } from '@hub/log';
import { type Upstream, upstreamOf } from '../routes';
import { hoistSchemaDefs } from './schema-defs';
import { TAG_DESCRIPTIONS } from './tags';
import { DELIVERY_WEBHOOKS, ENTREGA_SCHEMA } from './webhooks';

export const API_TITLE = 'Event hub API';
/** The license of the document (the contract), as of the packages that implement it for callers: @hub/client, @hub/webhook-verifier. */
export const API_LICENSE = { name: 'MIT', identifier: 'MIT' };
const FETCH_TIMEOUT_MS = 3000;

export interface ServerUrls {
  ambiente: Ambiente;
  LOCALHOST: string;
  SANDBOX?: string;
  PRODUCTION?: string;
}

/** The configured environments, the current one (HUB_AMBIENTE) first. */
export function serversOf(urls: ServerUrls): NonNullable<OpenApiDocument['servers']> {
  const all = (['LOCALHOST', 'SANDBOX', 'PRODUCTION'] as const)
    .filter((name) => urls[name])
    .map((name) => ({ url: urls[name] as string, description: name }));
  return [...all.filter((s) => s.description === urls.ambiente), ...all.filter((s) => s.description !== urls.ambiente)];
}

/** The merged document also describes what the hub sends: its deliveries, as OpenAPI 3.1 webhooks. */
export type GatewayDocument = OpenApiDocument & { webhooks: typeof DELIVERY_WEBHOOKS };

export interface MergedOpenApi {
  document: GatewayDocument;
  /** Upstreams whose document could not be read; their routes are missing. */
  missing: string[];
}

async function fetchDocument(upstream: Upstream): Promise<OpenApiDocument> {
  const response = await fetch(`${upstream.url}/openapi.json`, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`status ${response.status}`);
  const document = (await response.json()) as OpenApiDocument;
  // Only the paths the gateway routes to this upstream are reachable through it.
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).filter(
      ([path]) => upstreamOf(path.replace(/\{[^}]+\}/g, 'x')) === upstream.name,
    ),
  );
  return { ...document, paths };
}

/**
 * The documents of every upstream merged into one, reused for `ttlMs`. A partial document (an
 * upstream down) is served but not kept, so the full one appears as soon as the upstream is back.
 */
export function createOpenApiSource(upstreams: Upstream[], servers: ServerUrls, ttlMs: number, logger: Logger) {
  const enabled = upstreams.filter((u) => u.enabled);
  let cached: { value: MergedOpenApi; until: number } | undefined;
  let inFlight: Promise<MergedOpenApi> | undefined;

  const build = async (): Promise<MergedOpenApi> => {
    const results = await Promise.allSettled(enabled.map(fetchDocument));
    const documents: OpenApiDocument[] = [];
    const missing: string[] = [];
    results.forEach((result, i) => {
      const name = enabled[i]!.name;
      if (result.status === 'fulfilled') documents.push(result.value);
      else {
        missing.push(name);
        logger.warn(
          { upstream: name, reason: (result.reason as Error).message },
          'could not read the OpenAPI document of an upstream',
        );
      }
    });
    const document: GatewayDocument = {
      ...mergeOpenApi(API_TITLE, documents, serversOf(servers)),
      webhooks: DELIVERY_WEBHOOKS,
    };
    document.components.schemas = { ...document.components.schemas, Entrega: ENTREGA_SCHEMA };
    document.info.license = API_LICENSE;
    document.tags = document.tags?.map(({ name }) =>
      TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name },
    );
    hoistSchemaDefs(document);
    document.info.description = missing.length
      ? `Incomplete: the documents of ${missing.join(', ')} could not be read right now.`
      : 'Every route of the platform, served through the gateway.';
    return { document, missing };
  };

  return {
    /** The URLs of the documented servers (the document's `servers`). */
    serverUrls: serversOf(servers).map((s) => s.url),
    async get(): Promise<MergedOpenApi> {
      if (cached && cached.until > Date.now()) return cached.value;
      inFlight ??= build().finally(() => {
        inFlight = undefined;
      });
      const value = await inFlight;
      if (value.missing.length === 0) cached = { value, until: Date.now() + ttlMs };
      return value;
    },
  };
}

import createClient, { type Client } from 'openapi-fetch';
import { HubError, HubNetworkError, type Problema } from './errors.js';
import type { paths } from './generated/schema.js';

/** Every route of the platform, typed from the merged /openapi.json (openapi-fetch). */
export type ApiClient = Client<paths, 'application/json'>;

export interface ApiClientOptions {
  /** The gateway, e.g. `https://hub.example.com`; `''` in a page served by the gateway itself. */
  baseUrl: string;
  /** The bearer token, read before every request; none (signed out) sends no authorization. */
  token: () => string | null | undefined | Promise<string | null | undefined>;
  /** Called on every 401, before the request throws: the token is no longer accepted. */
  onUnauthorized?: (error: HubError) => void;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: typeof fetch;
}

async function problemOf(response: Response): Promise<Partial<Problema> | undefined> {
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  if (body && typeof body === 'object' && 'codigo' in body) return body as Partial<Problema>;
  return { detail: response.statusText || undefined };
}

/**
 * The whole API for an operator's tool (the panel): one request per call, never retried (a person
 * is watching and decides), the token read per request. A refusal rejects with HubError (the
 * problem+json, with the method and route), an unreachable gateway with HubNetworkError; so a
 * resolved call always carries `data` (undefined only for 204).
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const client = createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use({
    async onRequest({ request }) {
      const token = await options.token();
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      request.headers.set('accept', 'application/json, application/problem+json');
      return request;
    },
    async onResponse({ request, response, schemaPath }) {
      if (response.ok) return undefined;
      const error = new HubError(response.status, await problemOf(response), 1, {
        method: request.method,
        path: schemaPath,
      });
      if (response.status === 401) options.onUnauthorized?.(error);
      throw error;
    },
    onError({ error }) {
      if (error instanceof HubError || (error instanceof Error && error.name === 'AbortError')) return error;
      return new HubNetworkError(1, error);
    },
  });
  return client;
}

import type { GatewayConfig } from './config';

export type UpstreamName = 'access' | 'function' | 'hub-api';

export interface Upstream {
  name: UpstreamName;
  /** Every instance of the service (its URL variable: one URL, or several separated by commas). */
  urls: readonly string[];
  /** The instance for the next request: each in turn (round robin). */
  readonly url: string;
  /** False when this deployment does not run the service (GATEWAY_UPSTREAMS). */
  enabled: boolean;
}

/** How an instance URL names a Unix socket on this host: `unix:/run/hub/hub-api.sock`. */
export const UNIX_PREFIX = 'unix:';

/** Where one instance of a service is, as undici dials it. */
export interface Instance {
  /** The origin requests are sent to (for a Unix socket, a placeholder: the Host header is the client's). */
  origin: string;
  /** A Unix socket to connect to instead of a TCP address. */
  socketPath?: string;
  /** A path the instance's URL carries, put before the request's ('' for an origin or a socket). */
  prefix: string;
  /**
   * The instance's host name, its TLS server name. undici otherwise takes a request's from its Host
   * header, the client's (the gateway's public name): an https instance would be asked for, and
   * checked against, the wrong name, and its connection remade whenever two clients' Hosts differ.
   */
  servername: string;
}

/**
 * An instance URL (`http://host:port[/path]`, `https://…`, or `unix:/absolute/path.sock` for a
 * service on the same host: docs/decisions/unix-socket-upstreams.md) as undici dials it.
 */
export function instanceOf(url: string): Instance {
  if (url.startsWith(UNIX_PREFIX)) {
    const socketPath = url.slice(UNIX_PREFIX.length);
    // undici takes an empty socketPath for none and would dial the placeholder origin (TCP localhost:80).
    if (socketPath === '') throw new Error(`${url} names no socket path`);
    return {
      origin: 'http://localhost',
      socketPath,
      prefix: '',
      servername: 'localhost',
    };
  }
  const parsed = new URL(url);
  return {
    origin: parsed.origin,
    prefix: parsed.pathname === '/' ? '' : parsed.pathname,
    servername: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
  };
}

/** An upstream over one or more instances, handed out in turn. */
export function upstream(name: UpstreamName, lista: string, enabled: boolean): Upstream {
  const urls = lista
    .split(',')
    .map((url) => url.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  let proxima = 0;
  return {
    name,
    urls,
    enabled,
    get url() {
      const url = urls[proxima % urls.length]!;
      proxima = (proxima + 1) % urls.length;
      return url;
    },
  };
}

/** Path prefixes of each service. A prefix matches itself and anything below it ("/evento" is not "/eventos"). */
export const ROUTE_TABLE: Record<UpstreamName, readonly string[]> = {
  access: ['/auth', '/perfil-de-acesso', '/colaborador'],
  function: ['/funcao'],
  'hub-api': [
    '/aplicativo',
    '/tipo-de-evento',
    '/versao-de-esquema',
    '/esquema',
    '/assinatura',
    '/assinaturas',
    '/tipos-de-evento',
    '/evento',
    '/eventos',
    '/evento-recusado',
    '/tentativa',
    '/destino',
    '/entrega',
    '/entregas',
    '/reprocessamento',
    '/reproducao',
    '/fila',
    '/.well-known/jwks.json',
  ],
};

const BY_PREFIX = new Map<string, UpstreamName>(
  Object.entries(ROUTE_TABLE).flatMap(([name, prefixes]) =>
    prefixes.map((prefix) => [prefix, name as UpstreamName] as const),
  ),
);

/** The service that serves a path, by its first segment (or the whole JWKS path). */
export function upstreamOf(path: string): UpstreamName | undefined {
  if (BY_PREFIX.has(path)) return BY_PREFIX.get(path);
  const slash = path.indexOf('/', 1);
  return slash === -1 ? undefined : BY_PREFIX.get(path.slice(0, slash));
}

export function upstreamsFrom(config: GatewayConfig): Record<UpstreamName, Upstream> {
  const make = (name: UpstreamName, urls: string) => upstream(name, urls, config.GATEWAY_UPSTREAMS.includes(name));
  return {
    access: make('access', config.ACCESS_URL),
    function: make('function', config.FUNCTION_URL),
    'hub-api': make('hub-api', config.HUB_API_URL),
  };
}

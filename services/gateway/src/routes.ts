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
    '/evento',
    '/eventos',
    '/evento-recusado',
    '/tentativa',
    '/destino',
    '/entrega',
    '/entregas',
    '/reprocessamento',
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

// The Ingress: which service each public path reaches, and that hub-api, reached without the gateway,
// holds the gateway's per-application budget itself.
import { loadConfig } from '@hub/config';
import { configSchemaOf } from './configuracao';
import { containerOf, environmentOf, named, ofKind, type Yaml } from './manifestos';

interface Caminho {
  path: string;
  pathType: 'Exact' | 'Prefix' | 'ImplementationSpecific';
  backend: { service: { name: string; port: { name?: string; number?: number } } };
}

const [ingress] = ofKind('Ingress');
const caminhos = (): Caminho[] => ingress!.spec.rules.flatMap((rule: Yaml) => rule.http.paths);

/**
 * The Service a request path reaches, as Kubernetes matches an Ingress's paths: an Exact path only
 * itself; a Prefix path itself and what lies below it by whole path elements (`/eventos` is not a
 * prefix of `/eventosx`); of several matches, an Exact one, then the longest prefix.
 */
function servicoDe(caminho: string): string | undefined {
  const exato = caminhos().find((c) => c.pathType === 'Exact' && c.path === caminho);
  if (exato) return exato.backend.service.name;
  const elementos = (p: string) => p.split('/').filter(Boolean);
  const prefixos = caminhos()
    .filter((c) => c.pathType === 'Prefix')
    .filter((c) => {
      const de = elementos(c.path);
      const pedido = elementos(caminho);
      return de.every((e, i) => pedido[i] === e);
    })
    .sort((a, b) => elementos(b.path).length - elementos(a.path).length);
  return prefixos[0]?.backend.service.name;
}

test('When the manifests are applied, then there is one Ingress, its paths Exact or Prefix (never implementation-specific), each to a Service port that exists', () => {
  expect(ofKind('Ingress')).toHaveLength(1);
  for (const c of caminhos()) {
    expect(['Exact', 'Prefix']).toContain(c.pathType);
    const service = named('Service', c.backend.service.name);
    expect(service.spec.ports.map((p: { name: string }) => p.name)).toContain(c.backend.service.port.name);
  }
  expect(ingress!.spec.tls?.[0]?.hosts).toEqual(ingress!.spec.rules.map((r: Yaml) => r.host));
});

test.each([
  ['/eventos', 'hub-api'],
  ['/eventos/0193a1b2-0000-7000-8000-00000000a001', 'gateway'],
  ['/eventos/', 'gateway'],
  ['/eventosx', 'gateway'],
  ['/evento', 'gateway'],
  ['/evento/resumo', 'gateway'],
  ['/entregas/0193a1b2-0000-7000-8000-00000000a001/reenviar', 'gateway'],
  ['/assinaturas', 'gateway'],
  ['/painel', 'gateway'],
  ['/openapi.json', 'gateway'],
  ['/.well-known/jwks.json', 'gateway'],
  ['/', 'gateway'],
])('When a request for %s comes in, then the Ingress sends it to %s', (caminho, servico) => {
  expect(servicoDe(caminho)).toBe(servico);
});

test('When the path matching is wrong, then these checks say so (the check is live)', () => {
  const original = caminhos()[0]!.pathType;
  caminhos()[0]!.pathType = 'Prefix';
  try {
    expect(servicoDe('/eventos/0193a1b2-0000-7000-8000-00000000a001')).toBe('hub-api');
  } finally {
    caminhos()[0]!.pathType = original;
  }
});

test("When publishing applications reach hub-api directly, then its budget per application is the gateway's, and its body limit too", () => {
  const hubApi = loadConfig(configSchemaOf('hub-api')!, environmentOf(containerOf('hub-api'))) as {
    HUB_PUBLICACOES_POR_MINUTO: number;
  };
  const gateway = loadConfig(configSchemaOf('gateway')!, environmentOf(containerOf('gateway'))) as {
    RATE_LIMIT_APPLICATION_PER_MINUTE: number;
    GATEWAY_BODY_LIMIT: number;
  };
  expect(hubApi.HUB_PUBLICACOES_POR_MINUTO).toBe(gateway.RATE_LIMIT_APPLICATION_PER_MINUTE);
  expect(hubApi.HUB_PUBLICACOES_POR_MINUTO).toBe(120_000);
  // hub-api takes bodies of 1 MiB at most (BODY_LIMIT of @hub/http), the gateway's default '1mb'.
  expect(gateway.GATEWAY_BODY_LIMIT).toBe(1024 * 1024);
});

// Scraping in Kubernetes, without a cluster: the Deployments' prometheus.io annotations and the
// Prometheus Operator's resources in infra/k8s/monitoring (PodMonitors, the PrometheusRule), checked
// against the operator's schemas and against where each service really serves /metrics.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { configSchemaOf, ROOT } from './configuracao';

const K8S = path.join(ROOT, 'infra/k8s');
const MONITORAMENTO = path.join(K8S, 'monitoring');

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, walked freely by the checks
type Yaml = any;

const documentos = (pasta: string, arquivos: string[]): Yaml[] =>
  arquivos.flatMap((arquivo) =>
    parseAllDocuments(readFileSync(path.join(pasta, arquivo), 'utf8')).map((doc) => {
      if (doc.errors.length) throw new Error(`${arquivo}: ${doc.errors[0]!.message}`);
      return { ...doc.toJS(), arquivo };
    }),
  );
const yamls = (pasta: string) => readdirSync(pasta).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const plataforma = documentos(K8S, yamls(K8S));
const monitoramento = documentos(MONITORAMENTO, yamls(MONITORAMENTO));
const podMonitors = monitoramento.filter((m) => m.kind === 'PodMonitor');

/** The services deployed, each watched by the alerts. */
const SERVICOS = ['gateway', 'access', 'function', 'hub-api', 'delivery-worker'];

const deployment = (servico: string) => {
  const achado = plataforma.find((m) => m.kind === 'Deployment' && m.metadata.name === servico);
  if (!achado) throw new Error(`no Deployment ${servico} in infra/k8s`);
  return achado;
};

/** A container's environment as far as these checks need it: the ConfigMap it reads whole, then env values. */
function ambienteDe(container: Yaml): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? [])
    if (from.configMapRef)
      Object.assign(
        env,
        plataforma.find((m) => m.kind === 'ConfigMap' && m.metadata.name === from.configMapRef.name)?.data,
      );
  for (const item of container.env ?? []) if ('value' in item) env[item.name] = item.value;
  return env;
}

/** Where a service serves /metrics, from its own configuration over its container's environment. */
function portaDasMetricas(servico: string): number {
  const container = deployment(servico).spec.template.spec.containers[0];
  const schema = configSchemaOf(servico) as unknown as { parse(env: object): Record<string, unknown> };
  const config = schema.parse({ ...ambienteDe(container), HUB_AMBIENTE: 'LOCALHOST' });
  return Number(
    servico === 'gateway' ? config.GATEWAY_METRICS_PORT : config[`${servico.toUpperCase().replace(/-/g, '_')}_PORT`],
  );
}

/** Whether a label selector (matchLabels, matchExpressions) selects these labels. */
function seleciona(seletor: Yaml, rotulos: Record<string, string>): boolean {
  const porRotulo = Object.entries(seletor.matchLabels ?? {}).every(([k, v]) => rotulos[k] === v);
  const porExpressao = (seletor.matchExpressions ?? []).every((e: Yaml) => {
    const valor = rotulos[e.key];
    if (e.operator === 'In') return valor !== undefined && e.values.includes(valor);
    if (e.operator === 'NotIn') return valor === undefined || !e.values.includes(valor);
    if (e.operator === 'Exists') return valor !== undefined;
    return valor === undefined;
  });
  return porRotulo && porExpressao;
}

const validar = ({ arquivo: _arquivo, ...manifesto }: Yaml) => {
  const modelo = require(`@kubernetes-models/prometheus-operator/${manifesto.apiVersion}/${manifesto.kind}`)[
    manifesto.kind
  ];
  new modelo(manifesto).validate();
};

test('When the monitoring manifests are checked against the Prometheus Operator schemas, then all are valid', () => {
  expect(monitoramento.map((m) => m.kind).sort()).toEqual(['PodMonitor', 'PodMonitor', 'PrometheusRule']);
  for (const m of monitoramento) expect(() => validar(m)).not.toThrow();
  const quebrado = structuredClone(podMonitors[0]);
  quebrado.spec.podMetricsEndpoints = 'http';
  expect(() => validar(quebrado)).toThrow();
  for (const m of monitoramento) expect(m.metadata.namespace).toBe('event-hub');
});

test('When kustomize applies infra/k8s/monitoring, then it lists every file there, and infra/k8s does not (the operator is optional)', () => {
  const lista = parseAllDocuments(readFileSync(path.join(MONITORAMENTO, 'kustomization.yaml'), 'utf8'))[0]!.toJS();
  expect([...lista.resources].sort()).toEqual(yamls(MONITORAMENTO).sort());
  const principal = parseAllDocuments(readFileSync(path.join(K8S, 'kustomization.yaml'), 'utf8'))[0]!.toJS();
  expect(principal.resources.filter((r: string) => r.startsWith('monitoring'))).toEqual([]);
});

test.each(SERVICOS)(
  "When Prometheus scrapes %s, then exactly one PodMonitor selects its pods, on the container port that serves /metrics, under a job of the service's name",
  (servico) => {
    const modelo = deployment(servico).spec.template;
    const rotulos = modelo.metadata.labels;
    const escolhidos = podMonitors.filter((p) => seleciona(p.spec.selector, rotulos));
    expect(escolhidos.map((p) => p.metadata.name)).toHaveLength(1);
    const [monitor] = escolhidos;
    expect(monitor.spec.jobLabel).toBe('app.kubernetes.io/name');
    expect(rotulos['app.kubernetes.io/name']).toBe(servico);
    const porta = portaDasMetricas(servico);
    const portas = modelo.spec.containers[0].ports;
    for (const endpoint of monitor.spec.podMetricsEndpoints) {
      expect(endpoint.path).toBe('/metrics');
      expect(portas.find((p: Yaml) => p.name === endpoint.port)?.containerPort).toBe(porta);
    }
  },
);

test('When the PodMonitors select pods, then RabbitMQ, which is not one of the services, is left to its own scraping', () => {
  const rabbit = plataforma.find((m) => m.kind === 'StatefulSet' && m.metadata.name === 'rabbitmq');
  expect(podMonitors.filter((p) => seleciona(p.spec.selector, rabbit.spec.template.metadata.labels))).toEqual([]);
});

test.each(SERVICOS)(
  'When a Prometheus discovers %s by its annotations, then they name the port and path of its /metrics',
  (servico) => {
    expect(deployment(servico).spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(portaDasMetricas(servico)),
      'prometheus.io/path': '/metrics',
    });
  },
);

// infra/k8s validated without a cluster: every manifest against the Kubernetes (and KEDA) schemas of
// kubernetes-models, then what the platform needs of them: probes, ports, the services' configuration.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '@hub/config';
import { QUEUES } from '@hub/contracts';
import { parseAllDocuments } from 'yaml';
import { configSchemaOf } from './configuracao';
import {
  containerOf,
  environmentOf,
  FILES,
  K8S,
  manifests,
  named,
  ofKind,
  SERVICES,
  validate,
  type Yaml,
} from './manifestos';

test('When every manifest is checked against the Kubernetes and KEDA schemas, then all are valid', () => {
  expect(manifests.length).toBeGreaterThan(20);
  const invalid: string[] = [];
  for (const manifest of manifests) {
    try {
      validate(manifest);
    } catch (error) {
      invalid.push(`${manifest.file} ${manifest.kind}/${manifest.metadata.name}: ${(error as Error).message}`);
    }
  }
  expect(invalid).toEqual([]);
});

test('When a manifest breaks the schema, then the validation says so (the check is live)', () => {
  const deployment = named('Deployment', 'hub-api');
  const broken = structuredClone(deployment);
  broken.spec.replicas = 'two';
  expect(() => validate(broken)).toThrow();
  const nameless = structuredClone(deployment);
  delete nameless.spec.template.spec.containers[0].name;
  expect(() => validate(nameless)).toThrow();
  const badProbe = structuredClone(deployment);
  badProbe.spec.template.spec.containers[0].readinessProbe.httpGet.path = 42;
  expect(() => validate(badProbe)).toThrow();
  // Unknown fields are not refused by these schemas: `kubectl apply --dry-run=server` catches them.
});

test('When kustomize applies the folder, then it lists every manifest file', () => {
  const kustomization = parseAllDocuments(readFileSync(path.join(K8S, 'kustomization.yaml'), 'utf8'))[0]!.toJS();
  expect([...kustomization.resources].sort()).toEqual([...FILES].sort());
});

test('When the services are deployed, then each has one Deployment and one Service, and no development-only service is', () => {
  expect(
    ofKind('Deployment')
      .map((d) => d.metadata.name)
      .sort(),
  ).toEqual([...SERVICES].sort());
  for (const service of SERVICES) {
    const deployment = named('Deployment', service);
    const selector = named('Service', service).spec.selector;
    expect(deployment.spec.template.metadata.labels).toMatchObject(selector);
    expect(deployment.spec.selector.matchLabels).toEqual(selector);
  }
  for (const m of manifests) expect(m.metadata.namespace ?? 'event-hub').toBe('event-hub');
});

test.each(SERVICES)(
  'When %s runs, then readiness is /saude/prontidao and liveness /saude on the port it listens on, with resources',
  (service) => {
    const container = containerOf(service);
    const env = environmentOf(container);
    const port = Number(env[`${service.toUpperCase().replace(/-/g, '_')}_PORT`]);
    const portOf = (ref: string | number) =>
      typeof ref === 'number' ? ref : container.ports.find((p: { name: string }) => p.name === ref)?.containerPort;
    expect(container.readinessProbe.httpGet.path).toBe('/saude/prontidao');
    expect(container.livenessProbe.httpGet.path).toBe('/saude');
    expect(portOf(container.readinessProbe.httpGet.port)).toBe(port);
    expect(portOf(container.livenessProbe.httpGet.port)).toBe(port);
    expect(env.HOST).toBe('0.0.0.0');
    const servicePort = named('Service', service).spec.ports.find((p: { name: string }) => p.name === 'http');
    expect(portOf(servicePort.targetPort)).toBe(port);
    expect(container.resources.requests).toEqual({ cpu: expect.anything(), memory: expect.any(String) });
    expect(container.resources.limits).toEqual({ cpu: expect.anything(), memory: expect.any(String) });
  },
);

test.each(SERVICES)(
  'When %s starts in PRODUCTION with the environment of its manifest, then its configuration loads',
  (service) => {
    const env = environmentOf(containerOf(service));
    expect(env.HUB_AMBIENTE).toBe('PRODUCTION');
    const schema = configSchemaOf(service);
    // A service whose code is not in this tree yet: at least what docs/architecture.md says it reads.
    if (!schema) {
      for (const name of ['RABBITMQ_URL', 'HUB_DATABASE_URL', 'HUB_SIGNING_KEYS']) expect(env[name]).toBeTruthy();
      return;
    }
    // loadConfig refuses, outside LOCALHOST, every variable left to a development default.
    expect(() => loadConfig(schema, env)).not.toThrow();
  },
);

test.each(SERVICES)(
  "When %s gets SIGTERM, then its hard stop limit (SHUTDOWN_TIMEOUT, and the worker's drain below it) ends before the pod's grace period",
  (service) => {
    const deployment = named('Deployment', service);
    const graceMs = (deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30) * 1000;
    const schema = configSchemaOf(service);
    if (!schema) return;
    const config = loadConfig(schema, environmentOf(containerOf(service))) as {
      SHUTDOWN_TIMEOUT: number;
      DELIVERY_STOP_TIMEOUT?: number;
    };
    expect(config.SHUTDOWN_TIMEOUT).toBeLessThan(graceMs);
    // The worker's configuration refuses a drain as long as the hard limit; this shows it is not.
    if (service === 'delivery-worker') expect(config.DELIVERY_STOP_TIMEOUT).toBeLessThan(config.SHUTDOWN_TIMEOUT);
  },
);

test('When a manifest forgets a variable a service requires, then the configuration check fails (the check is live)', () => {
  const env = environmentOf(containerOf('hub-api'));
  delete env.HUB_DATABASE_URL;
  expect(() => loadConfig(configSchemaOf('hub-api')!, env)).toThrow(/HUB_DATABASE_URL/);
});

/** The Secrets a container reads, whole (envFrom) or by key (env), with the variables each gives it. */
function secretsOf(container: Yaml): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const add = (secret: string, keys: string[]) => found.set(secret, [...(found.get(secret) ?? []), ...keys]);
  for (const from of container.envFrom ?? []) {
    if (from.secretRef) {
      const m = named('Secret', from.secretRef.name);
      add(from.secretRef.name, Object.keys({ ...m.data, ...m.stringData }));
    }
  }
  for (const item of container.env ?? [])
    if (item.valueFrom?.secretKeyRef) add(item.valueFrom.secretKeyRef.name, [item.name]);
  return found;
}

test('When the delivery worker signs, then it alone reads the private keys; hub-api, which only serves the JWKS, gets the public keys and no private one', () => {
  const worker = containerOf('delivery-worker').env.find((e: { name: string }) => e.name === 'HUB_SIGNING_KEYS');
  expect(worker?.valueFrom?.secretKeyRef).toEqual({ name: 'hub-signing-keys', key: 'HUB_SIGNING_KEYS' });
  expect(named('Secret', 'hub-signing-keys').stringData?.HUB_SIGNING_KEYS).toBeDefined();

  const hubApi = containerOf('hub-api');
  const env = environmentOf(hubApi);
  expect(env.HUB_SIGNING_KEYS).toBeUndefined();
  expect(env.HUB_SIGNING_KEYS_FILE).toBeUndefined();
  expect(secretsOf(hubApi).has('hub-signing-keys')).toBe(false);
  const jwks = hubApi.env.find((e: { name: string }) => e.name === 'HUB_SIGNING_JWKS');
  expect(jwks?.valueFrom?.configMapKeyRef).toEqual({ name: 'hub-signing-jwks', key: 'HUB_SIGNING_JWKS' });
  // The start reads HUB_SIGNING_JWKS before any key file (services/hub-api/src/start.ts).
  expect(configSchemaOf('hub-api')!.shape).toHaveProperty('HUB_SIGNING_JWKS');
  for (const service of SERVICES.filter((s) => s !== 'delivery-worker'))
    expect(secretsOf(containerOf(service)).has('hub-signing-keys')).toBe(false);
});

test('When the services are deployed, then each gets the URL of its own database only', () => {
  const own: Record<string, string[]> = {
    gateway: [],
    access: ['ACCESS_DATABASE_URL'],
    function: ['FUNCTION_DATABASE_URL'],
    'hub-api': ['HUB_DATABASE_URL', 'HUB_DATABASE_READ_URL'],
    'delivery-worker': ['HUB_DATABASE_URL'],
  };
  for (const service of SERVICES) {
    const databases = Object.keys(environmentOf(containerOf(service))).filter((name) =>
      /_DATABASE(_READ)?_URL$/.test(name),
    );
    expect({ service, databases }).toEqual({ service, databases: own[service] });
  }
});

test('When a service is deployed, then every secret value it gets is one its configuration reads (the gateway gets no RabbitMQ credentials)', () => {
  for (const service of SERVICES) {
    const reads = Object.keys(configSchemaOf(service)!.shape);
    const given = [...secretsOf(containerOf(service)).values()].flat();
    expect({ service, unread: given.filter((name) => !reads.includes(name)) }).toEqual({ service, unread: [] });
  }
  expect(environmentOf(containerOf('gateway')).RABBITMQ_URL).toBeUndefined();
  expect(secretsOf(containerOf('gateway')).size).toBe(0);
});

test("When the delivery queue grows, then KEDA's RabbitMQ scaler scales the worker on the topology's work queue", () => {
  const scaled = named('ScaledObject', 'delivery-worker');
  expect(scaled.spec.scaleTargetRef.name).toBe('delivery-worker');
  const [trigger] = scaled.spec.triggers;
  expect(trigger).toMatchObject({ type: 'rabbitmq', metadata: { queueName: QUEUES.entregas, mode: 'QueueLength' } });
  expect(QUEUES.entregas).toBe('delivery-worker.entregas.v2');
  const auth = named('TriggerAuthentication', trigger.authenticationRef.name);
  expect(auth.spec.secretTargetRef).toContainEqual({ parameter: 'host', name: 'hub-rabbitmq', key: 'RABBITMQ_URL' });
  expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
  expect(scaled.spec.maxReplicaCount).toBeGreaterThan(scaled.spec.minReplicaCount);
  expect(ofKind('HorizontalPodAutoscaler')).toEqual([]); // KEDA owns the worker's HPA
});

test('When RabbitMQ is deployed, then it is a 3-node cluster whose queues default to quorum, drained one node at a time', () => {
  const broker = named('StatefulSet', 'rabbitmq');
  expect(broker.spec.replicas).toBe(3);
  const conf = named('ConfigMap', 'rabbitmq-config').data!['rabbitmq.conf']!;
  expect(conf).toMatch(/^default_queue_type = quorum$/m);
  expect(conf).toMatch(/^cluster_formation\.peer_discovery_backend = k8s$/m);
  expect(named('PodDisruptionBudget', 'rabbitmq').spec.maxUnavailable).toBe(1);
  expect(named('Secret', 'hub-rabbitmq').stringData?.RABBITMQ_URL).toContain(
    'rabbitmq.event-hub.svc.cluster.local:5672',
  );
});

test('When PostgreSQL is deployed, then only the CloudNativePG cluster runs it and the database URLs come from a Secret, on its read-write Service', () => {
  const images = [...ofKind('Deployment'), ...ofKind('StatefulSet')].flatMap((m) =>
    m.spec.template.spec.containers.map((c: { image: string }) => c.image),
  );
  expect(images.filter((image) => /postgres/i.test(image))).toEqual([]);
  const databases = named('Secret', 'hub-databases').stringData!;
  expect(Object.keys(databases).sort()).toEqual([
    'ACCESS_DATABASE_URL',
    'FUNCTION_DATABASE_URL',
    'HUB_DATABASE_READ_URL',
    'HUB_DATABASE_URL',
  ]);
  for (const [name, url] of Object.entries(databases)) {
    expect(new URL(url).protocol).toBe('postgresql:');
    // Writes on the primary; the read URL on the replicas, the same database.
    const servico = name === 'HUB_DATABASE_READ_URL' ? 'hub-postgres-ro' : 'hub-postgres-rw';
    expect(new URL(url).host).toBe(`${servico}.event-hub.svc.cluster.local:5432`);
  }
  expect(new URL(databases.HUB_DATABASE_READ_URL!).pathname).toBe(new URL(databases.HUB_DATABASE_URL!).pathname);
});

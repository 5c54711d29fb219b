// infra/k8s/postgres.yaml, the CloudNativePG cluster, checked field by field (no schema package
// exists for its resources): what a failover needs of it, and that every service's database is on it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROOT } from './configuracao';

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, walked freely by the checks
type Yaml = any;

const ler = (arquivo: string): Yaml[] =>
  parseAllDocuments(readFileSync(path.join(ROOT, 'infra/k8s', arquivo), 'utf8')).map((doc) => {
    if (doc.errors.length) throw new Error(`${arquivo}: ${doc.errors[0]!.message}`);
    return doc.toJS();
  });
const postgres = ler('postgres.yaml');
const secrets = ler('secrets.yaml');
const doTipo = (docs: Yaml[], kind: string) => docs.filter((d) => d.kind === kind);
const [cluster] = doTipo(postgres, 'Cluster');
const urls: Record<string, string> = secrets.find((d) => d.metadata.name === 'hub-databases').stringData;

test('When PostgreSQL is deployed, then it is one CloudNativePG cluster of 3 instances, one per node, with one synchronous standby', () => {
  expect(doTipo(postgres, 'Cluster')).toHaveLength(1);
  expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
  expect(cluster.metadata).toMatchObject({ name: 'hub-postgres', namespace: 'event-hub' });
  expect(cluster.spec.instances).toBe(3);
  // Either the postgresql.synchronous stanza (CloudNativePG 1.24+) or the older min/maxSyncReplicas.
  const sincrono = cluster.spec.postgresql.synchronous;
  if (sincrono) expect(sincrono).toMatchObject({ method: 'any', number: 1 });
  else expect(cluster.spec).toMatchObject({ minSyncReplicas: 1, maxSyncReplicas: 1 });
  expect(cluster.spec.affinity).toMatchObject({ enablePodAntiAffinity: true, topologyKey: 'kubernetes.io/hostname' });
  expect(cluster.spec.storage.size).toMatch(/^\d+Gi$/);
});

test("When the services connect, then each URL names its database on the cluster's -rw Service (a read URL on its -ro), owned by a role the cluster manages", () => {
  const servico = (sufixo: string) =>
    `${cluster.metadata.name}-${sufixo}.${cluster.metadata.namespace}.svc.cluster.local:5432`;
  const donos = new Map<string, string>([
    [cluster.spec.bootstrap.initdb.database, cluster.spec.bootstrap.initdb.owner],
    ...doTipo(postgres, 'Database').map((d: Yaml): [string, string] => [d.spec.name, d.spec.owner]),
  ]);
  for (const d of doTipo(postgres, 'Database')) expect(d.spec.cluster.name).toBe(cluster.metadata.name);
  const papeis = new Set([cluster.spec.bootstrap.initdb.owner, ...cluster.spec.managed.roles.map((r: Yaml) => r.name)]);
  for (const [variavel, texto] of Object.entries(urls)) {
    const url = new URL(texto);
    const banco = url.pathname.slice(1);
    expect({ variavel, host: url.host, dono: donos.get(banco), usuario: url.username }).toEqual({
      variavel,
      host: servico(variavel.endsWith('_READ_URL') ? 'ro' : 'rw'),
      dono: url.username,
      usuario: url.username,
    });
    expect(papeis.has(url.username)).toBe(true);
  }
});

test('When a role has a password, then its Secret is a basic-auth Secret of that user, in the same namespace', () => {
  const secretsDoCluster = doTipo(postgres, 'Secret');
  const referidas = [
    cluster.spec.bootstrap.initdb.secret.name,
    ...cluster.spec.managed.roles.map((r: Yaml) => r.passwordSecret.name),
  ];
  for (const nome of referidas) {
    const secret = secretsDoCluster.find((s: Yaml) => s.metadata.name === nome);
    expect(secret).toMatchObject({ type: 'kubernetes.io/basic-auth', metadata: { namespace: 'event-hub' } });
    expect(Object.keys(secret.stringData).sort()).toEqual(['password', 'username']);
  }
});

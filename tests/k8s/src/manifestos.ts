// infra/k8s read once for the checks of tests/k8s: every manifest, and what a container's environment is.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROOT } from './configuracao';

export const K8S = path.join(ROOT, 'infra/k8s');

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, walked freely by the checks
export type Yaml = any;

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Yaml;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  file: string;
}

export const FILES = readdirSync(K8S).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
export const manifests: Manifest[] = FILES.flatMap((file) =>
  parseAllDocuments(readFileSync(path.join(K8S, file), 'utf8')).map((doc) => {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    return { ...(doc.toJS() as Omit<Manifest, 'file'>), file };
  }),
);
export const ofKind = (kind: string) => manifests.filter((m) => m.kind === kind);
export const named = (kind: string, name: string) => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in infra/k8s`);
  return found;
};

/** The kubernetes-models class of an apiVersion and kind (core, the API groups, KEDA). */
export function modelOf(apiVersion: string, kind: string): new (data: object) => { validate(): void } {
  const module = apiVersion.startsWith('keda.sh/')
    ? `@kubernetes-models/keda/${apiVersion}/${kind}`
    : `kubernetes-models/${apiVersion}/${kind}`;
  return require(module)[kind];
}
/** CloudNativePG's resources have no kubernetes-models package: postgres.unit.test.ts checks them field by field. */
const SEM_MODELO = /^postgresql\.cnpg\.io\//;
export const validate = ({ file: _file, ...manifest }: Manifest) =>
  SEM_MODELO.test(manifest.apiVersion) || new (modelOf(manifest.apiVersion, manifest.kind))(manifest).validate();

/** The services deployed; identity-dev and demo-receiver are for development only. */
export const SERVICES = ['gateway', 'access', 'function', 'hub-api', 'delivery-worker'];

/** The environment a container gets: envFrom (ConfigMaps, Secrets) then env, as the kubelet builds it. */
export function environmentOf(container: Yaml): NodeJS.ProcessEnv {
  const valuesOf = (kind: 'ConfigMap' | 'Secret', name: string) => {
    const m = named(kind, name);
    return { ...m.data, ...m.stringData };
  };
  const env: NodeJS.ProcessEnv = {};
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, valuesOf('ConfigMap', from.configMapRef.name));
    if (from.secretRef) Object.assign(env, valuesOf('Secret', from.secretRef.name));
  }
  for (const item of container.env ?? []) {
    if ('value' in item) env[item.name] = item.value;
    else if (item.valueFrom?.secretKeyRef)
      env[item.name] = valuesOf('Secret', item.valueFrom.secretKeyRef.name)[item.valueFrom.secretKeyRef.key];
    else if (item.valueFrom?.configMapKeyRef)
      env[item.name] = valuesOf('ConfigMap', item.valueFrom.configMapKeyRef.name)[item.valueFrom.configMapKeyRef.key];
  }
  return env;
}

export const containerOf = (service: string) => {
  const deployment = named('Deployment', service);
  return deployment.spec.template.spec.containers[0];
};

// Scraping under docker compose: infra/prometheus/prometheus.yml reaches every service's /metrics at the
// address and port the service itself takes from its compose environment, and the monitoring profile
// mounts the rules and the dashboard where Prometheus and Grafana look for them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { esquemaDoServico } from '../../../infra/scripts/lib/derivados';
import { ROOT } from './metricas';

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, walked freely by the checks
type Yaml = any;

const compose: Yaml = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
const prometheus: Yaml = parse(readFileSync(path.join(ROOT, 'infra/prometheus/prometheus.yml'), 'utf8'));
const alertas: Yaml = parse(readFileSync(path.join(ROOT, 'infra/prometheus/alerts.yml'), 'utf8'));

/** The services deployed (identity-dev and demo-receiver are development stand-ins, not watched). */
const SERVICOS = ['gateway', 'access', 'function', 'hub-api', 'delivery-worker'];

/** Where a service serves /metrics, from its own configuration read over its compose environment. */
function metricasDe(servico: string): { host: string; porta: number } {
  const esquema = esquemaDoServico(servico) as unknown as { parse(env: object): Record<string, unknown> };
  const config = esquema.parse({ ...compose.services[servico].environment });
  if (servico === 'gateway')
    return { host: String(config.GATEWAY_METRICS_HOST), porta: Number(config.GATEWAY_METRICS_PORT) };
  // The image sets HOST=0.0.0.0 (infra/docker/Dockerfile); each service listens on its port there.
  return { host: '0.0.0.0', porta: Number(config[`${servico.toUpperCase().replace(/-/g, '_')}_PORT`]) };
}

test('When Prometheus runs in docker compose, then it scrapes each service under a job of its name at the port it listens on', () => {
  const jobs = new Map<string, string[]>(
    prometheus.scrape_configs.map((j: Yaml) => [j.job_name, j.static_configs.flatMap((s: Yaml) => s.targets)]),
  );
  for (const servico of SERVICOS) {
    const { host, porta } = metricasDe(servico);
    expect({ servico, host }).toEqual({ servico, host: '0.0.0.0' });
    expect({ servico, alvos: jobs.get(servico) }).toEqual({ servico, alvos: [`${servico}:${porta}`] });
  }
  expect(prometheus.rule_files).toEqual(['alerts.yml']);
});

test('When the service-down alert matches jobs, then they are exactly the jobs of the services', () => {
  const down = alertas.groups.flatMap((g: Yaml) => g.rules).find((r: Yaml) => r.alert === 'HubServiceDown');
  const [, lista] = /job=~"([^"]+)"/.exec(down.expr) ?? [];
  expect(lista?.split('|').sort()).toEqual([...SERVICOS].sort());
});

test('When the monitoring profile is up, then Prometheus reads infra/prometheus and Grafana provisions infra/grafana', () => {
  const { prometheus: p, grafana: g } = compose.services;
  expect(p.profiles).toEqual(['monitoring']);
  expect(g.profiles).toEqual(['monitoring']);
  expect(p.volumes).toContain('./infra/prometheus:/etc/prometheus:ro');
  expect(p.command).toContain('--config.file=/etc/prometheus/prometheus.yml');
  expect(g.volumes).toContain('./infra/grafana/provisioning:/etc/grafana/provisioning:ro');
  const provedor = parse(readFileSync(path.join(ROOT, 'infra/grafana/provisioning/dashboards/event-hub.yml'), 'utf8'));
  expect(g.volumes).toContain(`./infra/grafana:${provedor.providers[0].options.path}:ro`);
  const fonte = parse(readFileSync(path.join(ROOT, 'infra/grafana/provisioning/datasources/prometheus.yml'), 'utf8'));
  expect(fonte.datasources[0]).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' });
  // The other services start without the profile, as before.
  for (const servico of SERVICOS) expect(compose.services[servico].profiles).toBeUndefined();
  // The gateway keeps the platform's environment beside its own metrics address.
  expect(compose.services.gateway.environment).toMatchObject({
    HUB_AMBIENTE: 'LOCALHOST',
    GATEWAY_METRICS_HOST: '0.0.0.0',
  });
});

test('When promtool checks prometheus.yml, then the configuration and the rules it loads are valid', () => {
  const r = spawnSync('promtool', ['check', 'config', 'prometheus.yml'], {
    cwd: path.join(ROOT, 'infra/prometheus'),
    encoding: 'utf8',
  });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
    throw new Error('promtool is not installed: `apt-get install -y prometheus` (.ci/run installs it when missing)');
  expect({ status: r.status, saida: `${r.stdout}${r.stderr}` }).toEqual({
    status: 0,
    saida: expect.stringContaining('is valid prometheus config file syntax'),
  });
});

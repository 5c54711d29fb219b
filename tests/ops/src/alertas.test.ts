// infra/prometheus/alerts.yml as Prometheus loads it: `promtool check rules`, then `promtool test rules`
// on alerts.test.yml (series that fire and series that must not, for every alert), over metric names
// the services really export, each alert with its runbook line in docs/operations.md.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { metricasDaExpressao, metricasExportadas, ROOT } from './metricas';

const PASTA = path.join(ROOT, 'infra/prometheus');

interface Regra {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface CasoDeTeste {
  input_series: { series: string; values: string }[];
  alert_rule_test: { alertname: string; eval_time: string; exp_alerts: unknown[] }[];
}

const arquivoDeAlertas = readFileSync(path.join(PASTA, 'alerts.yml'), 'utf8');
const regras: Regra[] = parse(arquivoDeAlertas).groups.flatMap((g: { rules: Regra[] }) => g.rules);
const casos: CasoDeTeste[] = parse(readFileSync(path.join(PASTA, 'alerts.test.yml'), 'utf8')).tests;

/** Runs promtool in `pasta`; fails the test with how to install it when it is not there. */
function promtool(args: string[], pasta = PASTA): { status: number | null; saida: string } {
  const r = spawnSync('promtool', args, { cwd: pasta, encoding: 'utf8' });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
    throw new Error(
      'promtool is not installed, and these tests need it: `apt-get install -y prometheus` (Debian ships promtool in that package; .ci/run installs it when missing). Stop the prometheus daemon the package may start: `service prometheus stop`.',
    );
  if (r.error) throw r.error;
  return { status: r.status, saida: `${r.stdout}${r.stderr}` };
}

test('When promtool checks the rules, then alerts.yml is valid and holds the eight alerts of the runbook', () => {
  const { status, saida } = promtool(['check', 'rules', 'alerts.yml']);
  expect({ status, saida }).toEqual({
    status: 0,
    saida: expect.stringContaining(`SUCCESS: ${regras.length} rules found`),
  });
  expect(regras.map((r) => r.alert).sort()).toEqual(
    [
      'HubDestinationCircuitOpen',
      'HubDestinationFailing',
      'HubErrorQueueGrowing',
      'HubOutboxLagGrowing',
      'HubPublicationsRefusedOverload',
      'HubServiceDown',
      'HubServiceNotReady',
      'HubWorkQueueWithoutConsumer',
    ].sort(),
  );
});

test('When promtool runs alerts.test.yml, then every alert fires on the series that should fire it and on no other', () => {
  const { status, saida } = promtool(['test', 'rules', 'alerts.test.yml']);
  expect({ status, saida }).toEqual({ status: 0, saida: expect.stringContaining('SUCCESS') });
});

/** "90s", "5m", "1h" in seconds (the durations promtool's files use). */
const segundos = (d: string) => {
  const [, n, u] = /^(\d+)(s|m|h)$/.exec(d) ?? [];
  if (!n) throw new Error(`not a duration: ${d}`);
  return Number(n) * { s: 1, m: 60, h: 3600 }[u as 's' | 'm' | 'h'];
};

test('When alerts.test.yml is read, then each alert has a case where it fires, and a case of series where it stays silent past its `for`', () => {
  for (const { alert, for: espera = '0s' } of regras) {
    const avaliacoes = casos.flatMap((c) => c.alert_rule_test).filter((t) => t.alertname === alert);
    expect({ alert, dispara: avaliacoes.some((t) => t.exp_alerts.length > 0) }).toEqual({ alert, dispara: true });
    // Series that look like trouble but are not: a case that never expects this alert, looked at
    // after its `for` has passed (not only a firing case looked at too early).
    const silencioso = casos.some(
      (c) =>
        c.alert_rule_test.every((t) => t.alertname !== alert || t.exp_alerts.length === 0) &&
        c.alert_rule_test.some((t) => t.alertname === alert && segundos(t.eval_time) > segundos(espera)),
    );
    expect({ alert, silencioso }).toEqual({ alert, silencioso: true });
  }
});

test('When an alert could never fire, then promtool test rules fails (each firing case is live)', () => {
  const pasta = mkdtempSync(path.join(tmpdir(), 'alertas-'));
  try {
    writeFileSync(path.join(pasta, 'alerts.test.yml'), readFileSync(path.join(PASTA, 'alerts.test.yml')));
    for (const { alert } of regras) {
      const mudado = parse(arquivoDeAlertas);
      for (const grupo of mudado.groups)
        for (const regra of grupo.rules as Regra[]) if (regra.alert === alert) regra.expr = 'vector(1) == 0';
      writeFileSync(path.join(pasta, 'alerts.yml'), stringify(mudado));
      const { status, saida } = promtool(['test', 'rules', 'alerts.test.yml'], pasta);
      expect({ alert, status }).toEqual({ alert, status: 1 });
      expect(saida).toContain(`alertname: ${alert}`);
    }
  } finally {
    rmSync(pasta, { recursive: true, force: true });
  }
});

test('When the alerts and their test series name metrics, then every one of them is exported by a service', async () => {
  const exportadas = await metricasExportadas();
  const lidas = regras.flatMap((r) => metricasDaExpressao(r.expr).map((m) => `${r.alert}: ${m}`));
  expect(lidas.filter((l) => !exportadas.has(l.split(': ')[1]!))).toEqual([]);
  const series = casos.flatMap((c) => c.input_series.map((s) => s.series.split('{')[0]!));
  expect([...new Set(series)].filter((m) => !exportadas.has(m))).toEqual([]);
});

test('When an alert fires, then its annotations point at its runbook line in docs/operations.md, which names it', () => {
  const documento = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
  const operacoes = documento.slice(documento.indexOf('\n## Alerts'), documento.indexOf('\n## Runbooks'));
  for (const r of regras) {
    expect({ alert: r.alert, runbook: r.annotations?.runbook }).toEqual({
      alert: r.alert,
      runbook: `docs/operations.md, Alerts, ${r.alert}`,
    });
    expect(r.annotations?.summary).toBeTruthy();
    expect(['critical', 'warning']).toContain(r.labels?.severity);
    expect({ alert: r.alert, noDocumento: operacoes.includes(`\`${r.alert}\``) }).toEqual({
      alert: r.alert,
      noDocumento: true,
    });
  }
});

test('When a PromQL expression is read for its metrics, then functions, keywords, labels and ranges are not taken for metrics', () => {
  expect(
    metricasDaExpressao(
      'sum by (origem) (rate(hub_x_total{resultado="falha", a=~"b|c"}[15m])) / on (origem) group_left sum(rate(hub_y_total[$__rate_interval])) > 0.5 and up{job="x"} == 0 or vector(0)',
    ).sort(),
  ).toEqual(['hub_x_total', 'hub_y_total', 'up']);
  expect(metricasDaExpressao('histogram_quantile(0.99, sum by (le) (rate(h_bucket[5m]))) offset 1h')).toEqual([
    'h_bucket',
  ]);
  expect(metricasDaExpressao('delta(max by (fila) (g{papel="erro"})[30m:1m]) > 10')).toEqual(['g']);
});

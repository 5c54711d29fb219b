// infra/grafana/event-hub.json: a Grafana dashboard that reads only metrics the services export,
// shows every metric the alerts watch, and is laid out without overlaps.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { metricasDaExpressao, metricasExportadas, ROOT } from './metricas';

interface Painel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { refId: string; expr: string; datasource?: { uid: string } }[];
}

/** Grafana's reference to the dashboard's data source variable (not a template literal). */
const FONTE = ['$', '{datasource}'].join('');

const painel = JSON.parse(readFileSync(path.join(ROOT, 'infra/grafana/event-hub.json'), 'utf8'));
const paineis: Painel[] = painel.panels.flatMap((p: Painel & { panels?: Painel[] }) => [p, ...(p.panels ?? [])]);
const graficos = paineis.filter((p) => p.type !== 'row');
const expressoes = graficos.flatMap((p) => (p.targets ?? []).map((t) => ({ painel: p.title, expr: t.expr })));

test('When the dashboard is read, then it is a Grafana dashboard with a Prometheus data source variable every query uses', () => {
  expect(painel).toMatchObject({ uid: 'event-hub', title: expect.any(String), schemaVersion: expect.any(Number) });
  expect(painel.templating.list).toContainEqual(
    expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
  );
  expect(graficos.length).toBeGreaterThan(20);
  for (const p of graficos) {
    expect({ painel: p.title, datasource: p.datasource?.uid }).toEqual({
      painel: p.title,
      datasource: FONTE,
    });
    expect({ painel: p.title, consultas: (p.targets ?? []).length > 0 }).toEqual({ painel: p.title, consultas: true });
    expect(new Set(p.targets!.map((t) => t.refId)).size).toBe(p.targets!.length);
    expect(p.targets!.every((t) => t.datasource?.uid === FONTE)).toBe(true);
  }
  expect(new Set(paineis.map((p) => p.id)).size).toBe(paineis.length);
});

test('When the panels are laid out, then each fits the 24 columns and none overlaps another', () => {
  const sobrepostos: string[] = [];
  for (const [i, a] of paineis.entries()) {
    expect(a.gridPos.x + a.gridPos.w).toBeLessThanOrEqual(24);
    for (const b of paineis.slice(i + 1)) {
      const [ga, gb] = [a.gridPos, b.gridPos];
      if (ga.x < gb.x + gb.w && gb.x < ga.x + ga.w && ga.y < gb.y + gb.h && gb.y < ga.y + ga.h)
        sobrepostos.push(`${a.title} / ${b.title}`);
    }
  }
  expect(sobrepostos).toEqual([]);
});

test('When a query names a metric, then a service exports it', async () => {
  const exportadas = await metricasExportadas();
  const desconhecidas = expressoes.flatMap(({ painel: titulo, expr }) =>
    metricasDaExpressao(expr)
      .filter((m) => !exportadas.has(m))
      .map((m) => `${titulo}: ${m}`),
  );
  expect(desconhecidas).toEqual([]);
});

test('When the alerts watch a metric, then the dashboard shows it too', () => {
  const alertas = parse(readFileSync(path.join(ROOT, 'infra/prometheus/alerts.yml'), 'utf8'));
  const vigiadas = new Set<string>(
    alertas.groups.flatMap((g: { rules: { expr: string }[] }) => g.rules.flatMap((r) => metricasDaExpressao(r.expr))),
  );
  const mostradas = new Set(expressoes.flatMap(({ expr }) => metricasDaExpressao(expr)));
  expect([...vigiadas].filter((m) => !mostradas.has(m))).toEqual([]);
});

// `pnpm derive`: writes the files made from others (infra/scripts/lib/derivados.ts): docs/configuration.md
// from the services' config schemas, and the Kubernetes PrometheusRule from infra/prometheus/alerts.yml.
// Run it after changing a config.ts or alerts.yml; tests/ops fails until it has been run.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DERIVADOS, ROOT } from './lib/derivados';

for (const [arquivo, render] of DERIVADOS) {
  const destino = path.join(ROOT, arquivo);
  const novo = render();
  let antigo: string | undefined;
  try {
    antigo = readFileSync(destino, 'utf8');
  } catch {
    antigo = undefined;
  }
  if (antigo === novo) {
    console.log(`${arquivo}: up to date`);
    continue;
  }
  mkdirSync(path.dirname(destino), { recursive: true });
  writeFileSync(destino, novo);
  console.log(`${arquivo}: written`);
}

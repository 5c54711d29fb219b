// Files written from others by `pnpm derive` (infra/scripts/lib/derivados.ts): docs/configuration.md
// from the services' config schemas, the PrometheusRule from alerts.yml. They must be what the
// command writes now, so a variable added to a schema without running it fails here.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  DERIVADOS,
  DERIVE_COMMAND,
  esquemaDoServico,
  servicosComConfiguracao,
  VARIAVEIS_DAS_FERRAMENTAS,
  variaveisDe,
} from '../../../infra/scripts/lib/derivados';
import { ROOT } from './metricas';

const ler = (arquivo: string) => readFileSync(path.join(ROOT, arquivo), 'utf8');
/** Whether a Markdown table of the document has a row for the variable. */
const temLinha = (documento: string, nome: string) => new RegExp(`^\\| \`${nome}\` +\\|`, 'm').test(documento);

test.each(DERIVADOS.map(([arquivo, render]) => ({ arquivo, render })))(
  'When $arquivo is compared with what pnpm derive writes now, then they are the same',
  ({ arquivo, render }) => {
    const escrito = ler(arquivo);
    const agora = render();
    if (escrito !== agora) {
      const [linha] = agora.split('\n').filter((l, i) => l !== escrito.split('\n')[i]);
      throw new Error(
        `${arquivo} is not what its sources say now: run \`${DERIVE_COMMAND}\` and commit the result (first different line: ${linha ?? '(the end)'})`,
      );
    }
  },
);

test('When the services are listed, then each config.ts is in docs/configuration.md, every variable with what it does', () => {
  const servicos = servicosComConfiguracao();
  expect(servicos).toEqual(
    expect.arrayContaining([
      'access',
      'delivery-worker',
      'demo-receiver',
      'function',
      'gateway',
      'hub-api',
      'identity-dev',
    ]),
  );
  const documento = ler('docs/configuration.md');
  for (const servico of servicos) {
    expect(documento).toContain(`\n## ${servico}\n`);
    const variaveis = variaveisDe(esquemaDoServico(servico)!);
    // A variable without .describe() would be a row with an empty cell: the schema must say it.
    expect({ servico, semDescricao: variaveis.filter((v) => !v.descricao).map((v) => v.nome) }).toEqual({
      servico,
      semDescricao: [],
    });
    expect(variaveis.filter((v) => !temLinha(documento, v.nome))).toEqual([]);
  }
});

test('When a schema changes, then the rendered document changes with it (the comparison is live)', () => {
  const [, render] = DERIVADOS.find(([arquivo]) => arquivo === 'docs/configuration.md')!;
  const antes = render();
  const esquema = esquemaDoServico('hub-api')! as unknown as { shape: Record<string, unknown> };
  const campo = esquema.shape.HUB_CACHE_TTL;
  try {
    esquema.shape.HUB_CACHE_TTL_NOVA = campo;
    expect(render()).not.toBe(antes);
    expect(render()).toContain('`HUB_CACHE_TTL_NOVA`');
  } finally {
    delete esquema.shape.HUB_CACHE_TTL_NOVA;
  }
  expect(render()).toBe(antes);
});

test('When the start script, the image or the demo seed read a variable, then docs/configuration.md lists it', () => {
  const fontes = [
    'infra/scripts/start.mjs',
    ...readdirSync(path.join(ROOT, 'infra/scripts/lib'))
      .filter((f) => f.endsWith('.mjs'))
      .map((f) => `infra/scripts/lib/${f}`),
    'infra/scripts/seed-demo.ts',
    'infra/docker/run-service.sh',
  ];
  const lidas = new Set(
    fontes.flatMap((f) =>
      [...ler(f).matchAll(/(?:process\.env|\benv)\.([A-Z][A-Z0-9_]+)|\$\{([A-Z][A-Z0-9_]+):-/g)].map(
        (m) => m[1] ?? m[2]!,
      ),
    ),
  );
  const documentadas = new Set([
    ...servicosComConfiguracao().flatMap((s) => variaveisDe(esquemaDoServico(s)!).map((v) => v.nome)),
    ...VARIAVEIS_DAS_FERRAMENTAS.flatMap((f) => f.variaveis.map(([nome]) => nome)),
  ]);
  expect(lidas.size).toBeGreaterThan(10);
  expect([...lidas].filter((v) => !documentadas.has(v))).toEqual([]);
});

test('When README talks about configuration, then it links docs/configuration.md and names only variables that exist', () => {
  const readme = ler('README.md');
  const secao = readme.slice(readme.indexOf('\n## Configuration'), readme.indexOf('\n## Operations'));
  expect(secao).toContain('](docs/configuration.md)');
  const documento = ler('docs/configuration.md');
  const nomeadas = [...secao.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]+)`/g)].map((m) => m[1]!);
  expect(nomeadas.length).toBeGreaterThan(5);
  expect(nomeadas.filter((v) => !temLinha(documento, v))).toEqual([]);
  // The reference lives in docs/configuration.md; README keeps a table a screen can show.
  expect(secao.split('\n').filter((l) => l.length > 120)).toEqual([]);
});

test('When the PrometheusRule is read as YAML, then its groups are those of alerts.yml', () => {
  const regra = parse(ler('infra/k8s/monitoring/prometheus-rule.yaml'));
  expect(regra.spec.groups).toEqual(parse(ler('infra/prometheus/alerts.yml')).groups);
});

// Files written from other files of the tree, so that they cannot drift (`pnpm derive` writes them,
// tests/ops fails when they differ from what this renders):
// - docs/configuration.md, from each service's src/config.ts (its zod schema and .describe() texts);
// - infra/k8s/monitoring/prometheus-rule.yaml, infra/prometheus/alerts.yml as a PrometheusRule.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../../..');
export const DERIVE_COMMAND = 'pnpm derive';

// biome-ignore lint/suspicious/noExplicitAny: zod's internal definition, walked by its `type`
type Def = any;
interface Campo {
  _zod: { def: Def };
  meta(): Record<string, unknown> | undefined;
}
interface Esquema {
  shape: Record<string, Campo>;
}

/** The one configuration schema a services/<name>/src/config.ts exports (the object with a shape). */
export function esquemaDoServico(servico: string): Esquema | undefined {
  const file = path.join(ROOT, 'services', servico, 'src', 'config.ts');
  if (!existsSync(file)) return undefined;
  const esquemas = Object.values(require(file) as Record<string, unknown>).filter(
    (v): v is Esquema =>
      typeof v === 'object' &&
      v !== null &&
      typeof (v as { safeParse?: unknown }).safeParse === 'function' &&
      typeof (v as { shape?: unknown }).shape === 'object',
  );
  if (esquemas.length !== 1)
    throw new Error(`${file} should export one configuration schema, found ${esquemas.length}`);
  return esquemas[0];
}

/** The services that have a config.ts, in name order. */
export const servicosComConfiguracao = () =>
  readdirSync(path.join(ROOT, 'services'))
    .filter((s) => existsSync(path.join(ROOT, 'services', s, 'src', 'config.ts')))
    .sort();

export interface Variavel {
  nome: string;
  padrao: string;
  descricao: string | undefined;
}

/** The nodes of a field's definition, outermost first (default, optional, pipe, transform, enum…). */
function* nos(def: Def): Generator<Def> {
  yield def;
  for (const filho of [def.innerType, def.in, def.out]) if (filho) yield* nos(filho._zod.def);
}

const codigo = (texto: string) => (texto === '' ? 'empty' : `\`${texto}\``);

/** What a variable is when unset, as a cell: its default, a development default, or unset. */
function padraoDe(campo: Campo): string {
  const desenvolvimento = campo.meta()?.developmentDefault;
  if (typeof desenvolvimento === 'string') return `${codigo(desenvolvimento)} (LOCALHOST only; required elsewhere)`;
  for (const def of nos(campo._zod.def)) {
    if (def.type === 'default') return codigo(String(def.defaultValue));
    if (def.type === 'optional') return 'unset';
  }
  return 'required';
}

/** The words an enum takes, when the field is one. */
function valoresDe(campo: Campo): string[] | undefined {
  for (const def of nos(campo._zod.def)) if (def.type === 'enum') return Object.values(def.entries as object);
  return undefined;
}

export function variaveisDe(esquema: Esquema): Variavel[] {
  return Object.entries(esquema.shape).map(([nome, campo]) => {
    const texto = campo.meta()?.description as string | undefined;
    const valores = valoresDe(campo);
    // The words an enum takes, unless the description already names them all.
    const faltam = texto && valores?.some((v) => !texto.includes(v));
    const descricao = faltam ? `${texto}: ${valores!.map((v) => `\`${v}\``).join(', ')}` : texto;
    return { nome, padrao: padraoDe(campo), descricao };
  });
}

/**
 * Variables read by the tools around the services (the start script, the image, the demo seed, the
 * test setup), which have no schema of their own. tests/ops checks that every variable those files
 * read is here or in a service's schema.
 */
export const VARIAVEIS_DAS_FERRAMENTAS: { onde: string; variaveis: [string, string, string][] }[] = [
  {
    onde: '`pnpm start` / `pnpm dev` (infra/scripts/start.mjs)',
    variaveis: [
      [
        'START_WITHOUT',
        'unset',
        'services not to start, comma-separated (e.g. `delivery-worker` when it runs elsewhere)',
      ],
      [
        'START_UNIX_SOCKETS',
        '`false`',
        '`true`: the gateway reaches access, function and hub-api on Unix sockets under `.data/run` instead of on their ports',
      ],
      ['START_TIMEOUT', '`90`', 'seconds each service has to become ready before the start gives up'],
      ['START_SEED', '`true`', '`false` skips the demo seed (infra/scripts/seed-demo.ts)'],
      ['START_LOG_FORMAT', 'unset', "`json` prints the services' raw JSON log lines instead of the readable ones"],
      ['NO_COLOR', 'unset', 'any value: no colours in the prefixed logs'],
      [
        'DATABASE_ADMIN_URL',
        '`postgresql://postgres@127.0.0.1:5432/postgres`',
        'the PostgreSQL server `pnpm start` checks is up before starting anything (each service then creates and migrates its own database, at its `*_DATABASE_URL`)',
      ],
      ['RABBITMQ_MANAGEMENT_URL', '`http://localhost:15672`', "RabbitMQ's management UI, printed when it answers"],
      [
        'NODE_MAX_OLD_SPACE_MB',
        '`192` for hub-api, `0` for the others',
        "V8's old space of each service (`--max-old-space-size`); `0` leaves V8's default. The image (infra/docker/run-service.sh) reads it too",
      ],
      [
        'NODE_MAX_SEMI_SPACE_MB',
        '`32` for delivery-worker, `16` for hub-api, `0` for the others',
        "V8's young generation of each service (`--max-semi-space-size`); `0` leaves V8's default (16 MB on Node 20, growing to 64 MB on Node 24). The image (infra/docker/run-service.sh) reads it too",
      ],
    ],
  },
  {
    onde: 'the demo seed (infra/scripts/seed-demo.ts; `pnpm start` sets them)',
    variaveis: [
      ['GATEWAY_URL', '`http://127.0.0.1:8080`', 'the gateway the seed talks to'],
      ['IDENTITY_URL', '`http://127.0.0.1:8085`', "identity-dev, which issues the seed's tokens"],
      [
        'DEMO_RECEIVER_URL',
        '`http://127.0.0.1:8086`',
        "the demo receiver's address as the delivery worker reaches it (the demo subscription's URL)",
      ],
    ],
  },
  {
    onde: 'the tests (`pnpm test`)',
    variaveis: [
      [
        'TEST_DATABASE_URL',
        '`postgresql://postgres@127.0.0.1:5432/postgres`',
        'the PostgreSQL server on which each test file gets its own database',
      ],
      [
        'HUB_TEST_VHOST',
        '`hub-test`',
        'the RabbitMQ virtual host of the tests, so that two checkouts can run their tests at once',
      ],
      ['SWEEP_SEED', '`20261123`', 'the seed of the hostile-input sweep (tests/platform), to replay a failure'],
      ['PANEL_CHROMIUM', '`/usr/bin/chromium`', "the Chromium the panel's browser tests drive"],
    ],
  },
];

/**
 * A Markdown table with its columns padded to their widest cell, as the repository's formatter
 * (biome) writes tables, so that `biome check` and this file agree.
 */
function tabela(cabecalho: string[], linhas: string[][]): string[] {
  const celulas = [cabecalho, ...linhas].map((l) => l.map((c) => c.replaceAll('|', '\\|')));
  const largura = cabecalho.map((_, i) => Math.max(3, ...celulas.map((l) => [...l[i]!].length)));
  const linha = (l: string[]) => `| ${l.map((c, i) => c + ' '.repeat(largura[i]! - [...c].length)).join(' | ')} |`;
  return [linha(celulas[0]!), `| ${largura.map((n) => '-'.repeat(n)).join(' | ')} |`, ...celulas.slice(1).map(linha)];
}

/** docs/configuration.md: per service, every variable with its default and what it does. */
export function documentoDeConfiguracao(): string {
  const servicos = servicosComConfiguracao().map((nome) => ({ nome, variaveis: variaveisDe(esquemaDoServico(nome)!) }));
  // A variable several services read with the same meaning and default is listed once, with who reads it.
  const porNome = new Map<string, { v: Variavel; servicos: string[] }[]>();
  for (const { nome, variaveis } of servicos)
    for (const v of variaveis) {
      const iguais = porNome.get(v.nome) ?? [];
      const mesma = iguais.find((i) => i.v.padrao === v.padrao && i.v.descricao === v.descricao);
      if (mesma) mesma.servicos.push(nome);
      else iguais.push({ v, servicos: [nome] });
      porNome.set(v.nome, iguais);
    }
  const partilhadas = [...porNome.values()].flat().filter((i) => i.servicos.length > 1);
  const ePartilhada = (servico: string, v: Variavel) =>
    partilhadas.some((p) => p.v === v || (p.v.nome === v.nome && p.servicos.includes(servico)));

  const out = [
    '# Configuration',
    '',
    `<!-- Written by \`${DERIVE_COMMAND}\` from each service's src/config.ts (its zod schema and the .describe() of each`,
    '     variable). Do not edit: change the schema, then run the command; tests/ops fails while they differ. -->',
    '',
    "Every service reads only its environment (`pnpm start` passes the caller's environment to all of",
    'them) and checks it at start: a wrong or missing variable stops the service with a message naming it.',
    'Durations are written `500ms`, `5s`, `2m`, `1h` or `7d`. A default marked "LOCALHOST only" applies',
    'only when `HUB_AMBIENTE` is `LOCALHOST`: in SANDBOX and PRODUCTION (and when `HUB_AMBIENTE` is unset,',
    'which is PRODUCTION) the service refuses to start without the variable and names it.',
    '',
    "Tracing is configured by OpenTelemetry's standard `OTEL_*` variables, which the SDK reads itself in",
    'gateway, hub-api and the delivery worker (so they are in no schema below): docs/operations.md, "Tracing",',
    'lists them; nothing is exported unless `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_TRACES_EXPORTER` asks.',
    '',
    '## Read by several services',
    '',
    ...tabela(
      ['variable', 'default', 'read by', 'what it does'],
      partilhadas.map(({ v, servicos: s }) => [`\`${v.nome}\``, v.padrao, s.join(', '), v.descricao ?? '']),
    ),
  ];
  for (const { nome, variaveis } of servicos) {
    const proprias = variaveis.filter((v) => !ePartilhada(nome, v));
    out.push(
      '',
      `## ${nome}`,
      '',
      `\`services/${nome}/src/config.ts\`; also reads: ${
        variaveis
          .filter((v) => ePartilhada(nome, v))
          .map((v) => `\`${v.nome}\``)
          .join(', ') || 'nothing shared'
      }.`,
    );
    if (proprias.length)
      out.push(
        '',
        ...tabela(
          ['variable', 'default', 'what it does'],
          proprias.map((v) => [`\`${v.nome}\``, v.padrao, v.descricao ?? '']),
        ),
      );
  }
  out.push('', '## Read by the tools, not by a service');
  for (const { onde, variaveis } of VARIAVEIS_DAS_FERRAMENTAS)
    out.push(
      '',
      `${onde}:`,
      '',
      ...tabela(
        ['variable', 'default', 'what it does'],
        variaveis.map(([nome, padrao, descricao]) => [`\`${nome}\``, padrao, descricao]),
      ),
    );
  return `${out.join('\n')}\n`;
}

/**
 * infra/prometheus/alerts.yml as the Prometheus Operator's PrometheusRule: its `groups:` block, as
 * written (comments included), under `spec:`.
 */
export function regraDoOperador(): string {
  const alertas = readFileSync(path.join(ROOT, 'infra/prometheus/alerts.yml'), 'utf8');
  const inicio = alertas.search(/^groups:/m);
  if (inicio < 0) throw new Error('infra/prometheus/alerts.yml has no top-level groups:');
  const grupos = alertas
    .slice(inicio)
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n');
  return [
    `# Written by \`${DERIVE_COMMAND}\` from infra/prometheus/alerts.yml (its groups, as they are); do not edit.`,
    '# For a Prometheus run by the Prometheus Operator: kubectl apply -k infra/k8s/monitoring',
    'apiVersion: monitoring.coreos.com/v1',
    'kind: PrometheusRule',
    'metadata:',
    '  name: event-hub',
    '  namespace: event-hub',
    '  labels:',
    '    app.kubernetes.io/part-of: event-hub',
    'spec:',
    grupos.trimEnd(),
    '',
  ].join('\n');
}

/** Every derived file: its path from the root and what it must hold. */
export const DERIVADOS: [string, () => string][] = [
  ['docs/configuration.md', documentoDeConfiguracao],
  ['infra/k8s/monitoring/prometheus-rule.yaml', regraDoOperador],
];

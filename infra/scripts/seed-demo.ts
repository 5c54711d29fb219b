// The demo of `pnpm start`: an application `Loja demo` (client_id loja-demo), its event type
// `pedido.criado` with schema version 1, and its subscriptions to that type at the demo receiver
// (ASSINATURAS_DA_DEMO; each at `/webhooks/{its id}`: the receiver accepts there only deliveries that
// name that subscription). Then it prints the first publication of README (a curl with the
// application's token and a valid body) and where to see it arrive.
//   npx tsx infra/scripts/seed-demo.ts
// Idempotent: everything is looked up first, so a second run creates nothing. Goes through the
// gateway with a master token of identity-dev. Environment: GATEWAY_URL (http://127.0.0.1:8080),
// IDENTITY_URL (http://127.0.0.1:8085), DEMO_RECEIVER_URL (http://127.0.0.1:8086), COMPANY_DOMAIN.

const gateway = trimSlash(process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080');
const identity = trimSlash(process.env.IDENTITY_URL ?? 'http://127.0.0.1:8085');
const receiver = trimSlash(process.env.DEMO_RECEIVER_URL ?? 'http://127.0.0.1:8086');
const domain = (process.env.COMPANY_DOMAIN ?? 'empresa.com.br').trim().replace(/^@/, '');
const email = `demo@${domain}`;

const APLICATIVO = { nome: 'Loja demo', client_id: 'loja-demo' };
const TIPO = {
  nome: 'pedido.criado',
  descricao: 'A customer placed an order in the demo shop (published by Loja demo).',
};
const ESQUEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'pedido.criado v1',
  type: 'object',
  required: ['pedido_id', 'cliente', 'itens', 'total_centavos'],
  properties: {
    pedido_id: { type: 'string', minLength: 1 },
    cliente: {
      type: 'object',
      required: ['nome', 'email'],
      properties: { nome: { type: 'string', minLength: 1 }, email: { type: 'string', format: 'email' } },
    },
    itens: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['sku', 'quantidade', 'preco_centavos'],
        properties: {
          sku: { type: 'string', minLength: 1 },
          quantidade: { type: 'integer', minimum: 1 },
          preco_centavos: { type: 'integer', minimum: 0 },
        },
      },
    },
    total_centavos: { type: 'integer', minimum: 0 },
  },
};
const PEDIDO_EXEMPLO = {
  pedido_id: 'P-1001',
  cliente: { nome: 'Ana Souza', email: 'ana.souza@example.com' },
  itens: [
    { sku: 'CAMISETA-AZUL-M', quantidade: 2, preco_centavos: 4990 },
    { sku: 'CANECA-LOGO', quantidade: 1, preco_centavos: 2990 },
  ],
  total_centavos: 12970,
};

/** The order of README's first publication: short enough to read in one line of a terminal. */
const PRIMEIRO_PEDIDO = {
  pedido_id: 'P-1001',
  cliente: { nome: 'Ana', email: 'ana@example.com' },
  itens: [{ sku: 'CANECA', quantidade: 1, preco_centavos: 2990 }],
  total_centavos: 2990,
};
/** A large order: it also matches the filtered, ordered subscription. */
const PEDIDO_GRANDE = {
  pedido_id: 'P-1002',
  cliente: { nome: 'Bruno', email: 'bruno@example.com' },
  itens: [{ sku: 'CAFETEIRA', quantidade: 1, preco_centavos: 15900 }],
  total_centavos: 15900,
};

interface Aplicativo {
  id: string;
  nome: string;
  client_id: string;
  ativo: boolean;
}
interface Tipo {
  id: string;
  nome: string;
  aplicativo_id: string;
  aplicativo_nome: string;
  ativo: boolean;
}
interface Versao {
  id: string;
  versao: number;
  ativa: boolean;
  esquema: unknown;
}
interface Assinatura {
  id: string;
  url_de_destino: string;
  ativa: boolean;
  versao_do_esquema: number;
  filtro: unknown;
  entrega_ordenada: boolean;
}

class SeedError extends Error {}

function trimSlash(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

async function http<T>(
  method: string,
  url: string,
  options: { token?: string; body?: unknown } = {},
): Promise<{ status: number; body: T }> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        accept: 'application/json',
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new SeedError(
      `cannot reach ${new URL(url).origin} (${cause?.code ?? cause?.message ?? (error as Error).message}). Is the platform running (pnpm start)?`,
    );
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: response.status, body: body as T };
}

/** A call that must succeed (or answer one of `accept`); anything else stops the seed with the problem. */
async function api<T>(
  method: string,
  path: string,
  token: string,
  body?: unknown,
  accept: number[] = [],
): Promise<{ status: number; body: T }> {
  const result = await http<T>(method, `${gateway}${path}`, { token, body });
  if ((result.status >= 200 && result.status < 300) || accept.includes(result.status)) return result;
  throw new SeedError(`${method} ${gateway}${path} answered ${result.status}: ${describeProblem(result.body)}`);
}

function describeProblem(body: unknown): string {
  if (typeof body !== 'object' || body === null) return String(body ?? '(empty body)').slice(0, 500);
  const problem = body as { codigo?: string; detail?: string; erros?: { caminho: string; mensagem: string }[] };
  const erros = (problem.erros ?? []).map((e) => `\n    ${e.caminho || '/'}: ${e.mensagem}`).join('');
  return problem.codigo ? `${problem.codigo}: ${problem.detail ?? ''}${erros}` : JSON.stringify(body).slice(0, 500);
}

/** Looks up first; creates only when absent. A 409 means a concurrent run created it: look again. */
async function findOrCreate<T>(
  find: () => Promise<T | undefined>,
  create: () => Promise<{ status: number; body: T }>,
): Promise<{ item: T; created: boolean }> {
  const existing = await find();
  if (existing) return { item: existing, created: false };
  const result = await create();
  if (result.status !== 409) return { item: result.body, created: true };
  const raced = await find();
  if (!raced) throw new SeedError(`the hub answered 409 but the item cannot be found: ${describeProblem(result.body)}`);
  return { item: raced, created: false };
}

const query = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

function report(what: string, name: string, created: boolean, id: string, notes: string[] = []): void {
  const extra = notes.length ? `  (${notes.join('; ')})` : '';
  process.stdout.write(`  ${created ? '+ created' : '= found  '}  ${what.padEnd(14)} ${name}  ${id}${extra}\n`);
}

async function masterToken(): Promise<string> {
  const { status, body } = await http<{ access_token?: string }>('POST', `${identity}/token`, {
    body: { email, master: true },
  });
  if (status !== 200 || !body?.access_token)
    throw new SeedError(`POST ${identity}/token answered ${status}: ${describeProblem(body)}`);
  return body.access_token;
}

async function seed(): Promise<void> {
  process.stdout.write(`demo seed through ${gateway} as ${email} (master)\n`);
  const token = await masterToken();

  const aplicativo = await findOrCreate(
    async () => {
      const { body } = await api<{ itens: Aplicativo[] }>(
        'GET',
        `/aplicativo?${query({ busca: APLICATIVO.client_id, tamanho: 500 })}`,
        token,
      );
      return body.itens.find((a) => a.client_id === APLICATIVO.client_id);
    },
    () => api<Aplicativo>('POST', '/aplicativo', token, APLICATIVO, [409]),
  );
  const app = aplicativo.item;
  report(
    'application',
    `${app.nome} (client_id ${app.client_id})`,
    aplicativo.created,
    app.id,
    app.ativo ? [] : ['switched off'],
  );

  const tipo = await findOrCreate(
    async () => {
      const { body } = await api<Tipo[]>('GET', `/tipo-de-evento/filtro?${query({ nome: TIPO.nome })}`, token);
      return body.find((t) => t.nome === TIPO.nome);
    },
    () => api<Tipo>('POST', '/tipo-de-evento', token, { ...TIPO, aplicativo_id: app.id }, [409]),
  );
  const notasDoTipo = [
    ...(tipo.item.aplicativo_id === app.id ? [] : [`owned by ${tipo.item.aplicativo_nome}, not ${app.nome}`]),
    ...(tipo.item.ativo ? [] : ['switched off']),
  ];
  report('event type', tipo.item.nome, tipo.created, tipo.item.id, notasDoTipo);

  const versao = await findOrCreate(
    async () => {
      const { body } = await api<Versao[]>(
        'GET',
        `/versao-de-esquema/filtro?${query({ tipo_de_evento_id: tipo.item.id, versao: 1 })}`,
        token,
      );
      return body.find((v) => v.versao === 1);
    },
    () =>
      api<Versao>('POST', '/versao-de-esquema', token, {
        tipo_de_evento_id: tipo.item.id,
        esquema: ESQUEMA,
        descricao: 'First version of the demo order.',
      }),
  );
  const notasDaVersao = [
    ...(JSON.stringify(versao.item.esquema) === JSON.stringify(ESQUEMA)
      ? []
      : ["its schema is not the seed's one; kept as it is"]),
    ...(versao.item.ativa ? [] : ['switched off']),
  ];
  report('schema version', `${tipo.item.nome} v${versao.item.versao}`, versao.created, versao.item.id, notasDaVersao);

  // The demo's subscriptions, each its own entry of ASSINATURAS_DA_DEMO: one more is one more entry.
  const assinaturas = [];
  for (const demo of ASSINATURAS_DA_DEMO) {
    assinaturas.push(await semearAssinatura(token, demo, { app, tipoId: tipo.item.id, versao: versao.item.versao }));
  }

  const todos = [aplicativo, tipo, versao, ...assinaturas];
  const created = todos.filter((x) => x.created).length;
  process.stdout.write(
    created
      ? `  ${created} created, ${todos.length - created} already there\n`
      : '  nothing to create: the demo was already seeded\n',
  );
  // the first publication last: what the screen of pnpm start ends with
  process.stdout.write(
    [
      '',
      ...maisParaTestar(versao.item.id),
      '',
      ...primeiraPublicacao(tipo.item.id),
      '',
      ...pedidoGrande(),
      '',
      '',
    ].join('\n'),
  );
}

/**
 * A subscription of the demo receiver to seed. The receiver takes deliveries at
 * /webhooks/{assinatura_id} and refuses any whose body names another subscription; the id is the
 * hub's, so the subscription is made at /webhooks and then pointed at its own path.
 */
interface AssinaturaDaDemo {
  /** What the seed's report calls it. */
  nome: string;
  /** Fields of POST /assinatura beyond the subscriber, type, version and URL (e.g. a filter). */
  campos: Record<string, unknown>;
  /** Whether a subscription of the demo application to the type is this one (the others are other entries'). */
  eEsta: (a: Assinatura) => boolean;
}

/** The filtered, ordered subscription's filter: orders of R$ 100.00 or more. */
const PEDIDOS_GRANDES = { 'dados.total_centavos': { $gte: 10_000 } };

const ASSINATURAS_DA_DEMO: AssinaturaDaDemo[] = [
  // Every pedido.criado: what the first publication of README reaches.
  {
    nome: 'every order',
    campos: {},
    eEsta: (a) => a.filtro === null && !a.entrega_ordenada,
  },
  // Only large orders (a filter), one at a time and in order per order (entidade_id): the first
  // publication (R$ 29.90) does not reach it; the second one the seed prints does.
  {
    nome: 'orders of R$ 100 or more, in order per order',
    campos: { filtro: PEDIDOS_GRANDES, entrega_ordenada: true },
    eEsta: (a) => a.entrega_ordenada && JSON.stringify(a.filtro) === JSON.stringify(PEDIDOS_GRANDES),
  },
];

async function semearAssinatura(
  token: string,
  demo: AssinaturaDaDemo,
  de: { app: Aplicativo; tipoId: string; versao: number },
): Promise<{ item: Assinatura; created: boolean }> {
  const base = `${receiver}/webhooks`;
  const destinoDe = (id: string) => `${base}/${id}`;
  const assinatura = await findOrCreate(
    async () => {
      const filtro = { aplicativo_assinante_id: de.app.id, tipo_de_evento_id: de.tipoId, versao_do_esquema: de.versao };
      const { body } = await api<Assinatura[]>('GET', `/assinatura/filtro?${query(filtro)}`, token);
      const daDemo = body.filter((a) => demo.eEsta(a));
      // at its own path; or one an earlier seed left at /webhooks, moved below
      return (
        daDemo.find((a) => a.url_de_destino === destinoDe(a.id)) ??
        daDemo.find((a) => a.url_de_destino === base || a.url_de_destino.startsWith(`${base}/`))
      );
    },
    () =>
      api<Assinatura>(
        'POST',
        '/assinatura',
        token,
        {
          aplicativo_assinante_id: de.app.id,
          tipo_de_evento_id: de.tipoId,
          versao_do_esquema: de.versao,
          url_de_destino: base,
          ...demo.campos,
        },
        [409],
      ),
  );
  const destino = destinoDe(assinatura.item.id);
  const notas = assinatura.item.ativa ? [] : ['switched off'];
  if (assinatura.item.url_de_destino !== destino) {
    await api('PATCH', `/assinatura/${assinatura.item.id}`, token, { url_de_destino: destino });
    if (!assinatura.created) notas.push(`moved from ${assinatura.item.url_de_destino}`);
  }
  report('subscription', `${demo.nome}: ${de.app.nome} -> ${destino}`, assinatura.created, assinatura.item.id, notas);
  return assinatura;
}

/** An address as a person types it: the loopback address as localhost (README's steps use it). */
const exibir = (url: string) => url.replace(/^(https?:\/\/)(127\.0\.0\.1|\[::1\])(?=[:/]|$)/, '$1localhost');

/**
 * The steps 2 and 3 of README's "Publishing a first event", with this demo's type id and addresses:
 * a shell script (its prose lines are comments), each line indented by 4. README shows the same
 * lines, with the defaults' addresses and the id left for the reader (tests/platform's entrega.test.ts
 * runs them and compares them with README).
 */
/** The curl of POST /eventos for one pedido (after step 2's TIPO_ID and APP_TOKEN). */
const publicar = (pedido: typeof PRIMEIRO_PEDIDO) => [
  `curl -s -X POST ${exibir(gateway)}/eventos -H "authorization: Bearer $APP_TOKEN" \\`,
  `  -H 'content-type: application/json' \\`,
  `  -d '{"tipo_de_evento_id":"'$TIPO_ID'","versao_do_esquema":1,"entidade_id":"${pedido.pedido_id}",`,
  // dados on one line: subscribers receive it as written, line breaks included
  `       "dados":${JSON.stringify(pedido)}}'`,
];

function primeiraPublicacao(tipoId: string): string[] {
  const comandos = [
    '# 2. publish as the application loja-demo (identity-dev issues its token)',
    `TIPO_ID=${tipoId}`,
    `APP_TOKEN=$(curl -s -X POST ${exibir(identity)}/token/aplicativo -H 'content-type: application/json' \\`,
    `  -d '{"client_id":"${APLICATIVO.client_id}"}' | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
    ...publicar(PRIMEIRO_PEDIDO),
    '# 3. see it arrive: the deliveries the demo receiver verified, newest first',
    `curl -s ${exibir(receiver)}/recebidos`,
  ];
  return [
    'Publish a first event (README.md, "Publishing a first event"; step 1 was pnpm start):',
    ...comandos.map((l) => `    ${l}`),
  ];
}

/** The second subscription at work: a large order matches its filter and carries its sequencia. */
function pedidoGrande(): string[] {
  return [
    'A large order also reaches the second subscription (filtro: dados.total_centavos >= 10000, entrega_ordenada:',
    'one at a time per entidade_id), whose delivery carries "sequencia": 1, then 2, 3 for the same order:',
    ...publicar(PEDIDO_GRANDE).map((l) => `    ${l}`),
  ];
}

function maisParaTestar(versaoId: string): string[] {
  const tokenLine =
    `TOKEN=$(curl -s -X POST ${exibir(identity)}/token -H 'content-type: application/json' ` +
    `-d '{"email":"${email}","master":true}' | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`;
  return [
    'Try the demo schema (a master token, then check a sample pedido against version 1):',
    `  ${tokenLine}`,
    `  curl -s -X POST ${exibir(gateway)}/versao-de-esquema/${versaoId}/validar -H "authorization: Bearer $TOKEN" ` +
      `-H 'content-type: application/json' -d '${JSON.stringify({ dados: PEDIDO_EXEMPLO })}'`,
    '  (set "quantidade" to 0 or drop "itens" to see the erros)',
  ];
}

seed().catch((error: unknown) => {
  const message =
    error instanceof SeedError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`demo seed failed: ${message}\n`);
  process.exit(1);
});

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ERRO_MAXIMO_DA_LATENCIA, horaDoResumo } from '@hub/hub-data';
import { waitFor } from '@hub/testing';
import pg from 'pg';
import { api, closeConnections } from './http-client';
import { type Platform, startPlatform } from './platform';

/**
 * The whole chain as it runs in production: an application publishes through the gateway, hub-api
 * stores the delivery and relays its job, the delivery worker signs and POSTs it, and the demo
 * receiver verifies the signature against hub-api's JWKS.
 */
const ROOT = path.resolve(__dirname, '../../..');
let platform: Platform;

beforeAll(async () => {
  platform = await startPlatform();
}, 180_000);
afterAll(async () => {
  closeConnections();
  await platform?.stop();
}, 60_000);

test('When an application publishes an event, then the subscriber (the demo receiver) gets it signed and verifies it', async () => {
  const identity = platform.urls['identity-dev'];
  const receiver = platform.urls['demo-receiver'];
  const semear = () =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/scripts/seed-demo.ts'], {
      cwd: ROOT,
      env: { ...process.env, GATEWAY_URL: platform.gatewayUrl, IDENTITY_URL: identity, DEMO_RECEIVER_URL: receiver },
    });
  // The subscription's URL is the receiver's /webhooks/{its id}; a second run finds it there.
  expect((await semear()).stdout).toMatch(new RegExp(`subscription .*-> ${receiver}/webhooks/[0-9a-f-]{36} `));
  expect((await semear()).stdout).toContain('nothing to create');
  const master = (
    await api<{ access_token: string }>(identity, undefined, 'POST', '/token', {
      email: 'demo@empresa.com.br',
      master: true,
    })
  ).body.access_token;
  const aplicativo = (
    await api<{ access_token: string }>(identity, undefined, 'POST', '/token/aplicativo', {
      client_id: 'loja-demo',
    })
  ).body.access_token;
  const [tipo] = (
    await api<{ id: string }[]>(platform.gatewayUrl, master, 'GET', '/tipo-de-evento/filtro?nome=pedido.criado')
  ).body;

  const dados = {
    pedido_id: 'P-9',
    cliente: { nome: 'Ana', email: 'ana@example.com' },
    itens: [{ sku: 'X', quantidade: 1, preco_centavos: 100 }],
    total_centavos: 100,
  };
  const publicado = await api<{ id: string }>(platform.gatewayUrl, aplicativo, 'POST', '/eventos', {
    tipo_de_evento_id: tipo!.id,
    versao_do_esquema: 1,
    entidade_id: 'P-9',
    dados,
  });
  expect(publicado.status).toBe(201);

  const recebido = await waitFor(
    async () => {
      const lista = (
        await api<{ webhook_id: string; chave_id: string | null; corpo: { id: string } }[]>(
          receiver,
          undefined,
          'GET',
          '/recebidos',
        )
      ).body;
      return lista.find((r) => r.corpo.id === publicado.body.id);
    },
    { timeoutMs: 20_000, what: 'the delivery at the demo receiver' },
  );
  expect(recebido.corpo).toMatchObject({
    id: publicado.body.id,
    tipo: 'pedido.criado',
    versao_do_esquema: 1,
    assinatura_id: expect.any(String),
    dados,
  });
  expect(recebido.chave_id).toEqual(expect.any(String));
}, 60_000);

test("When the seed's printed first publication is pasted into a shell, then the event arrives at the demo receiver, and README shows the same commands", async () => {
  const urls = {
    gateway: platform.gatewayUrl,
    identity: platform.urls['identity-dev'],
    receiver: platform.urls['demo-receiver'],
  };
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/scripts/seed-demo.ts'], {
    cwd: ROOT,
    env: { ...process.env, GATEWAY_URL: urls.gateway, IDENTITY_URL: urls.identity, DEMO_RECEIVER_URL: urls.receiver },
  });
  // The block: the lines indented by 4 after its heading, up to the first line that is not.
  const linhas = stdout.split('\n');
  const inicio = linhas.findIndex((l) => l.startsWith('Publish a first event'));
  expect(inicio).toBeGreaterThanOrEqual(0);
  const fim = linhas.findIndex((l, i) => i > inicio && !l.startsWith('    '));
  const comandos = linhas.slice(inicio + 1, fim).map((l) => l.slice(4));
  expect(comandos.length).toBeGreaterThan(5);

  // Pasted into bash as printed: it publishes (201 with the event) and lists the receiver's deliveries.
  const { stdout: saida } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', comandos.join('\n')], {
    cwd: ROOT,
  });
  const eventoId = /"id":"([0-9a-f-]{36})"/.exec(saida)?.[1];
  expect({ eventoId, saida: saida.slice(0, 300) }).toEqual({ eventoId: expect.any(String), saida: expect.any(String) });
  const recebido = await waitFor(
    async () => {
      const lista = (
        await api<{ corpo: { id: string; entidade_id: string } }[]>(urls.receiver, undefined, 'GET', '/recebidos')
      ).body;
      return lista.find((r) => r.corpo.id === eventoId);
    },
    { timeoutMs: 20_000, what: 'the first publication at the demo receiver' },
  );
  expect(recebido.corpo).toMatchObject({ tipo: 'pedido.criado', entidade_id: 'P-1001' });

  // README's steps 2 and 3 are these lines, at the default addresses, with the id left to the reader.
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const secao = readme.slice(readme.indexOf('## Publishing a first event'));
  const bloco = secao.slice(secao.indexOf('```sh\n') + 6, secao.indexOf('\n```', secao.indexOf('```sh\n'))).split('\n');
  const padrao = (l: string) =>
    l
      .replace(urls.gateway.replace('127.0.0.1', 'localhost'), 'http://localhost:8080')
      .replace(urls.identity.replace('127.0.0.1', 'localhost'), 'http://localhost:8085')
      .replace(urls.receiver.replace('127.0.0.1', 'localhost'), 'http://localhost:8086')
      .replace(/^TIPO_ID=.*/, 'TIPO_ID=');
  expect(bloco.slice(0, 2)).toEqual([
    '# 1. start the platform, and keep it running (Ctrl-C stops everything)',
    'pnpm start',
  ]);
  expect(bloco.slice(2).map(padrao)).toEqual(comandos.map(padrao));

  // The large order the seed prints next, after step 2's TIPO_ID and APP_TOKEN: it matches the second
  // subscription's filter too, which is ordered, so its delivery there carries a sequencia.
  const grande = linhas.findIndex((l) => l.startsWith('A large order'));
  expect(grande).toBeGreaterThan(fim);
  const inicioDoGrande = linhas.findIndex((l, i) => i > grande && l.startsWith('    '));
  const fimDoGrande = linhas.findIndex((l, i) => i > inicioDoGrande && !l.startsWith('    '));
  const passo2 = comandos.slice(
    0,
    comandos.findIndex((l) => l.startsWith('curl')),
  );
  const { stdout: saidaGrande } = await promisify(execFile)(
    'bash',
    [
      '-euo',
      'pipefail',
      '-c',
      [...passo2, ...linhas.slice(inicioDoGrande, fimDoGrande).map((l) => l.slice(4))].join('\n'),
    ],
    { cwd: ROOT },
  );
  const grandeId = /"id":"([0-9a-f-]{36})"/.exec(saidaGrande)?.[1];
  expect(grandeId).toEqual(expect.any(String));
  const duas = await waitFor(
    async () => {
      const lista = (
        await api<{ corpo: { id: string; sequencia?: number } }[]>(urls.receiver, undefined, 'GET', '/recebidos')
      ).body.filter((r) => r.corpo.id === grandeId);
      return lista.length === 2 ? lista : undefined;
    },
    { timeoutMs: 20_000, what: "the large order's two deliveries at the demo receiver" },
  );
  expect(duas.map((r) => r.corpo.sequencia ?? null).sort()).toEqual([1, null]);
  // The first order (R$ 29.90) reached only the unfiltered subscription.
  const doPrimeiro = (
    await api<{ corpo: { id: string } }[]>(urls.receiver, undefined, 'GET', '/recebidos')
  ).body.filter((r) => r.corpo.id === eventoId);
  expect(doPrimeiro).toHaveLength(1);
}, 60_000);

test("When events are delivered through the worker, then the summary's band of the hour gives p50 and p99 of their latencies (acceptance to conclusion) within the buckets' bound", async () => {
  // Not across an hour's end: every delivery of this test is counted in the hour it started in.
  const HORA_MS = 3_600_000;
  const ateAHora = HORA_MS - (Date.now() % HORA_MS);
  if (ateAHora < 60_000) await new Promise((resolve) => setTimeout(resolve, ateAHora + 1_000));
  const receiver = platform.urls['demo-receiver'];
  const master = await platform.userToken('demo@empresa.com.br', { master: true });
  const aplicativo = await platform.applicationToken('loja-demo');
  const [tipo] = (
    await api<{ id: string }[]>(platform.gatewayUrl, master, 'GET', '/tipo-de-evento/filtro?nome=pedido.criado')
  ).body;
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const publicado = await api<{ id: string }>(platform.gatewayUrl, aplicativo, 'POST', '/eventos', {
      tipo_de_evento_id: tipo!.id,
      versao_do_esquema: 1,
      entidade_id: `L-${i}`,
      dados: {
        pedido_id: `L-${i}`,
        cliente: { nome: 'Ana', email: 'ana@example.com' },
        itens: [{ sku: 'X', quantidade: 1, preco_centavos: 100 }],
        total_centavos: 100,
      },
    });
    expect(publicado.status).toBe(201);
    ids.push(publicado.body.id);
  }
  await waitFor(
    async () => {
      const lista = (await api<{ corpo: { id: string } }[]>(receiver, undefined, 'GET', '/recebidos')).body;
      return ids.every((id) => lista.some((r) => r.corpo.id === id));
    },
    { timeoutMs: 30_000, what: 'the 12 deliveries at the demo receiver' },
  );

  // The exact latencies of the hour's concluded deliveries, from the rows the worker wrote.
  const hora = horaDoResumo(new Date());
  const banco = new pg.Client({ connectionString: platform.databases['hub-api'] });
  await banco.connect();
  const latencias = await waitFor(
    async () => {
      const { rows } = await banco.query<{ ms: number; evento_id: string }>(
        `select (extract(epoch from entregue_em - evento_recebido_em) * 1000)::float8 as ms, evento_id::text
           from entrega where situacao = 'concluida' and date_trunc('hour', atualizada_em, 'UTC') = $1`,
        [hora],
      );
      return ids.every((id) => rows.some((r) => r.evento_id === id)) ? rows.map((r) => r.ms) : undefined;
    },
    { timeoutMs: 10_000, what: 'the concluded deliveries' },
  ).finally(() => banco.end());
  const ordenadas = [...latencias].sort((a, b) => a - b);
  const exato = (p: number) => ordenadas[Math.ceil((p * ordenadas.length) / 100) - 1] as number;

  const resumo = await api<{ por_hora: { hora: string; latencia_p50_ms: number; latencia_p99_ms: number }[] }>(
    platform.gatewayUrl,
    master,
    'GET',
    '/evento/resumo',
  );
  expect(resumo.status).toBe(200);
  const banda = resumo.body.por_hora.find((b) => b.hora === hora.toISOString());
  const dentro = (lido: number, certo: number) =>
    // a latency under 1 ms is bucket 0, read as 0
    certo < 1 ? lido === 0 : Math.abs(lido - certo) / certo <= ERRO_MAXIMO_DA_LATENCIA;
  expect(banda).toBeDefined();
  expect([banda!.latencia_p50_ms, exato(50), dentro(banda!.latencia_p50_ms, exato(50))]).toEqual([
    banda!.latencia_p50_ms,
    exato(50),
    true,
  ]);
  expect([banda!.latencia_p99_ms, exato(99), dentro(banda!.latencia_p99_ms, exato(99))]).toEqual([
    banda!.latencia_p99_ms,
    exato(99),
    true,
  ]);
}, 150_000);

import { waitFor } from '@hub/testing';
import { api } from '../http-client';
import type { Platform } from '../platform';
import { montarPalco, type Palco } from './palco';
import type { Assinante } from './receptor';

/**
 * The circuit breaker of a destination origin (issue 24) end to end: two hub-api and two worker
 * processes share one circuit through its destino row. Failures open it, its jobs wait without
 * spending attempts, a probe that fails opens it for twice as long, a probe that succeeds closes it,
 * and an operator closes it by hand through the gateway. Open periods are ten minutes, so nothing
 * happens by the clock alone: where the test needs a period over, it moves the row's end there.
 */
let palco: Palco;
let platform: Platform;
let assinante: Assinante;
let db: Palco['db'];
let master: string;

beforeAll(async () => {
  palco = await montarPalco({
    instancias: 2,
    env: {
      'delivery-worker': {
        DELIVERY_RETRY_DELAYS: '100ms,200ms',
        DELIVERY_DESTINOS_REFRESH: '200ms',
        DELIVERY_CIRCUIT_MIN_FAILURES: '4',
        DELIVERY_CIRCUIT_OPEN_FOR: '10m',
        DELIVERY_CIRCUIT_OPEN_MAX: '1h',
      },
    },
  });
  ({ platform, assinante, db } = palco);
  master = await platform.userToken('master.circuito@empresa.com.br', { master: true });
}, 240_000);

afterAll(() => palco?.encerrar(), 60_000);

interface Transicao {
  em: string;
  de: string;
  para: string;
  motivo: string;
  detalhe: string;
  falhas: number | null;
  aberto_ate: string | null;
  por: string | null;
}
interface Destino {
  id: string;
  origem: string;
  circuito: { situacao: string; desde: string | null; aberto_ate: string | null; historico: Transicao[] };
}

const gw = <T>(method: string, path: string, body?: unknown) => api<T>(platform.gatewayUrl, master, method, path, body);

async function destino(): Promise<Destino> {
  const pagina = await gw<{ itens: Destino[] }>('GET', '/destino?tamanho=100');
  const d = pagina.body.itens.find((i) => i.origem === assinante.origem);
  if (!d) throw new Error(`no destination ${assinante.origem}`);
  return d;
}
const ateOCircuito = (situacao: string, what: string) =>
  waitFor(async () => (await destino()).circuito.situacao === situacao, {
    timeoutMs: 30_000,
    intervalMs: 100,
    what,
  });

/** One metric of every worker process, summed over the series whose labels include `rotulos`. */
async function nosWorkers(nome: string, rotulos: Record<string, string>): Promise<number[]> {
  return Promise.all(
    platform.enderecos('delivery-worker').map(async (url) => {
      const texto = await (await fetch(`${url}/metrics`)).text();
      return texto
        .split('\n')
        .filter((l) => l.startsWith(`${nome}{`))
        .filter((l) => Object.entries(rotulos).every(([k, v]) => l.includes(`${k}="${v}"`)))
        .reduce((soma, l) => soma + Number(l.split(' ').at(-1)), 0);
    }),
  );
}
/** Until each worker process has held `mais` more jobs of an open circuit than when called. */
async function cadaUmReteve(mais: number) {
  const antes = await nosWorkers('hub_delivery_jobs_total', { desfecho: 'circuito' });
  await waitFor(
    async () =>
      (await nosWorkers('hub_delivery_jobs_total', { desfecho: 'circuito' })).every((n, i) => n >= antes[i]! + mais),
    { timeoutMs: 30_000, intervalMs: 100, what: `each worker holding ${mais} more jobs of the open circuit` },
  );
}

const tentativas = async (ids: string[]) =>
  Number(
    (await db.query<{ n: string }>('select count(*) as n from tentativa where entrega_id = any($1::uuid[])', [ids]))
      .rows[0]!.n,
  );
const concluidas = async (ids: string[]) =>
  Number(
    (
      await db.query<{ n: string }>(
        `select count(*) as n from entrega where id = any($1::uuid[]) and situacao = 'concluida'`,
        [ids],
      )
    ).rows[0]!.n,
  );
/** The open period is over: the row's end moved to the past, as the clock would move past it. */
const periodoEncerrado = (origem: string) =>
  db.query(`update destino set circuito_aberto_ate = now() - interval '1 second' where origem = $1`, [origem]);

let publicar: (n: number) => Promise<string[]>;

beforeAll(async () => {
  const loja = await gw<{ id: string }>('POST', '/aplicativo', {
    nome: 'Loja do circuito',
    client_id: 'loja-circuito',
  });
  const erp = await gw<{ id: string }>('POST', '/aplicativo', { nome: 'ERP do circuito', client_id: 'erp-circuito' });
  const tipo = await gw<{ id: string }>('POST', '/tipo-de-evento', {
    nome: 'pedido.circuito',
    aplicativo_id: loja.body.id,
  });
  await gw('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.body.id, esquema: { type: 'object' } });
  await gw('POST', '/assinatura', {
    aplicativo_assinante_id: erp.body.id,
    tipo_de_evento_id: tipo.body.id,
    versao_do_esquema: 1,
    url_de_destino: assinante.url('/circuito'),
    maximo_de_tentativas: 30,
  });
  const token = await platform.applicationToken('loja-circuito');
  publicar = async (n) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 1) {
      const r = await api<{ entregas: { id: string }[] }>(platform.gatewayUrl, token, 'POST', '/eventos', {
        tipo_de_evento_id: tipo.body.id,
        versao_do_esquema: 1,
        entidade_id: `p-${i}`,
        dados: { i },
      });
      expect(r.status).toBe(201);
      ids.push(...r.body.entregas.map((e) => e.id));
    }
    return ids;
  };
}, 60_000);

const todas: string[] = [];

test('When deliveries to an origin keep failing, then its circuit opens once for both workers, GET /destino shows why, and its jobs wait without spending attempts, old or new', async () => {
  assinante.responder('/circuito', 500);
  todas.push(...(await publicar(8)));
  await ateOCircuito('aberto', 'the circuit open');
  const { circuito } = await destino();
  expect(circuito.historico).toHaveLength(1);
  expect(circuito.historico[0]).toMatchObject({ de: 'fechado', para: 'aberto', motivo: 'falhas', por: null });
  expect(circuito.historico[0]!.falhas).toBeGreaterThanOrEqual(2);
  expect(Date.parse(circuito.aberto_ate!) - Date.parse(circuito.desde!)).toBe(600_000);
  await waitFor(
    async () => (await nosWorkers('hub_delivery_circuit_state', { origem: assinante.origem })).join() === '2,2',
    {
      what: 'both workers exporting the open state',
    },
  );

  await cadaUmReteve(2 * todas.length);
  const feitas = await tentativas(todas);
  const recebidas = assinante.de('/circuito').length;
  const novas = await publicar(4);
  todas.push(...novas);
  await cadaUmReteve(2 * todas.length);
  expect(await tentativas(todas)).toBe(feitas);
  expect(assinante.de('/circuito')).toHaveLength(recebidas);
  for (const id of novas) {
    const entrega = await gw<{ situacao: string; quantidade_de_tentativas: number }>('GET', `/entrega/${id}`);
    expect(entrega.body).toMatchObject({ situacao: 'pendente', quantidade_de_tentativas: 0 });
  }
});

test('When the open period ends and the probe fails, then one request reached the origin and the circuit opens again for twice as long; when the next probe succeeds, it closes and every delivery is concluded once', async () => {
  const antes = assinante.de('/circuito').length;
  await periodoEncerrado(assinante.origem);
  await waitFor(async () => (await destino()).circuito.historico[0]?.motivo === 'sonda_falhou', {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: 'the probe failed',
  });
  const { circuito } = await destino();
  expect(circuito.situacao).toBe('aberto');
  expect(circuito.historico.slice(0, 2).map((t) => [t.de, t.para, t.motivo])).toEqual([
    ['meio_aberto', 'aberto', 'sonda_falhou'],
    ['aberto', 'meio_aberto', 'periodo_encerrado'],
  ]);
  expect(Date.parse(circuito.aberto_ate!) - Date.parse(circuito.desde!)).toBe(1_200_000);
  expect(assinante.de('/circuito').length - antes).toBe(1);

  assinante.responder('/circuito', 204);
  await periodoEncerrado(assinante.origem);
  await ateOCircuito('fechado', 'the circuit closed by a probe');
  expect((await destino()).circuito.historico[0]).toMatchObject({
    de: 'meio_aberto',
    para: 'fechado',
    motivo: 'sonda_bem_sucedida',
    detalhe: 'the probe succeeded (HTTP 204)',
  });
  await waitFor(async () => (await concluidas(todas)) === todas.length, {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: 'every delivery concluded',
  });
  const duplas = await db.query(
    'select entrega_id from tentativa where entrega_id = any($1::uuid[]) and sucesso group by entrega_id having count(*) > 1',
    [todas],
  );
  expect(duplas.rows).toEqual([]);
});

test('When an operator closes an open circuit through the gateway, then it is closed at once for both workers, the history names them, and its deliveries are attempted again', async () => {
  assinante.responder('/circuito', 500);
  const ids = await publicar(8);
  await ateOCircuito('aberto', 'the circuit open again');
  const { id } = await destino();
  const desconhecido = await gw('POST', `/destino/${crypto.randomUUID()}/fechar-circuito`);
  expect(desconhecido.status).toBe(404);

  assinante.responder('/circuito', 204);
  const fechado = await gw<Destino>('POST', `/destino/${id}/fechar-circuito`);
  expect(fechado.status).toBe(200);
  expect(fechado.body.circuito.situacao).toBe('fechado');
  expect(fechado.body.circuito.historico[0]).toMatchObject({
    de: 'aberto',
    para: 'fechado',
    motivo: 'manual',
    por: 'master.circuito@empresa.com.br',
  });
  await waitFor(async () => (await concluidas(ids)) === ids.length, {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: 'every delivery concluded after the close by hand',
  });
  await waitFor(
    async () => (await nosWorkers('hub_delivery_circuit_state', { origem: assinante.origem })).join() === '0,0',
    {
      what: 'both workers exporting the closed state',
    },
  );
  // Transitions made by the workers, summed over both: two openings for failures and one for the
  // failed probe, two probes taken, one close by a probe (the close by hand is hub-api's).
  const soma = async (para: string) =>
    (await nosWorkers('hub_delivery_circuit_transitions_total', { origem: assinante.origem, para })).reduce(
      (a, b) => a + b,
      0,
    );
  expect([await soma('aberto'), await soma('meio_aberto'), await soma('fechado')]).toEqual([3, 2, 1]);
});

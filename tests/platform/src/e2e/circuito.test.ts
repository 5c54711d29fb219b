import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { waitFor } from '@hub/testing';
import { api } from '../http-client';
import type { Platform } from '../platform';
import { montarPalco, type Palco } from './palco';
import type { Assinante } from './receptor';

/**
 * The circuit breaker of a destination origin (issue 24) end to end: two hub-api and two worker
 * processes share one circuit through its destino row. Failures open it, its jobs wait in the
 * destination's own queue, unconsumed, without spending attempts, a probe that fails opens it for twice as long, a probe that succeeds closes it,
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
/** A counter without labels of its own (the service's only) of every worker process. */
async function contadorNosWorkers(nome: string): Promise<number[]> {
  return Promise.all(
    platform.enderecos('delivery-worker').map(async (url) => {
      const linha = (await (await fetch(`${url}/metrics`)).text())
        .split('\n')
        .find((l) => l.startsWith(`${nome} `) || l.startsWith(`${nome}{`));
      return Number(linha?.split(' ').at(-1) ?? 0);
    }),
  );
}

/**
 * The destination's own queue as RabbitMQ lists it (jobs ready, consumers), read with rabbitmqctl
 * on the platform's own virtual host; undefined while it does not exist. The broker refreshes these
 * figures every few seconds: they say where the jobs are, the workers' counters say nothing moved.
 */
async function filaDoDestino(id: string): Promise<{ prontas: number; consumidores: number } | undefined> {
  const vhost = decodeURIComponent(new URL(platform.rabbitmqUrl).pathname.slice(1));
  const { stdout } = await promisify(execFile)('rabbitmqctl', [
    '-q',
    'list_queues',
    '-p',
    vhost,
    'name',
    'messages_ready',
    'consumers',
  ]);
  const linha = stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find(([nome]) => nome === `delivery-worker.destino.${id}`);
  return linha ? { prontas: Number(linha[1]), consumidores: Number(linha[2]) } : undefined;
}

/** Until `n` jobs sit in the open circuit's own queue, which no worker consumes. */
async function sentados(n: number, what: string) {
  const { id } = await destino();
  await waitFor(
    async () => {
      const fila = await filaDoDestino(id);
      if (fila?.prontas === n && fila.consumidores === 0) return true;
      throw new Error(`its queue had ${fila?.prontas} job(s) ready and ${fila?.consumidores} consumer(s)`);
    },
    { timeoutMs: 40_000, intervalMs: 250, what },
  );
}

/** Until every worker process has read the destinations `vezes` more times (and obeyed them). */
async function leituras(vezes: number) {
  const antes = await contadorNosWorkers('hub_delivery_destination_reads_total');
  await waitFor(
    async () =>
      (await contadorNosWorkers('hub_delivery_destination_reads_total')).every((n, i) => n >= antes[i]! + vezes),
    { timeoutMs: 30_000, intervalMs: 100, what: `each worker reading the destinations ${vezes} more times` },
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

test('When deliveries to an origin keep failing, then its circuit opens once for both workers, GET /destino shows why, and its jobs wait in its own queue, unconsumed, without spending attempts, old or new', async () => {
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

  // Every job ends up in the destination's own queue (those that were failing when it opened, after
  // their retry's delay), and stays there: no worker consumes it while the circuit is open.
  await sentados(todas.length, "every job in the open circuit's own queue");
  const feitas = await tentativas(todas);
  const recebidas = assinante.de('/circuito').length;
  const novas = await publicar(4);
  todas.push(...novas);
  await sentados(todas.length, 'the new jobs in the queue too');
  // Nothing moves: no job is forwarded again or sent round a delay queue while the workers read the
  // open circuit again and again.
  const soma = async (desfecho: string) =>
    (await nosWorkers('hub_delivery_jobs_total', { desfecho })).reduce((a, b) => a + b, 0);
  const encaminhados = await soma('encaminhado');
  await leituras(3);
  expect(await soma('encaminhado')).toBe(encaminhados);
  expect(await soma('circuito')).toBe(0);
  expect(await tentativas(todas)).toBe(feitas);
  expect(assinante.de('/circuito')).toHaveLength(recebidas);
  for (const id of novas) {
    const entrega = await gw<{ situacao: string; quantidade_de_tentativas: number }>('GET', `/entrega/${id}`);
    expect(entrega.body).toMatchObject({ situacao: 'pendente', quantidade_de_tentativas: 0 });
  }
  // Where the broker's figures (refreshed every few seconds) need the time to say so.
}, 120_000);

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

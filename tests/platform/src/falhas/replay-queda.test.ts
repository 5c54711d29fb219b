import { type PrivatePostgres, startPrivatePostgres, waitFor } from '@hub/testing';
import pg from 'pg';
import { api } from '../http-client';
import { montarPalco, type Palco } from '../e2e/palco';
import { type Assinante, portaLivre } from '../e2e/receptor';
import type { Platform } from '../platform';
import { ENTREGADOR_RAPIDO } from './ritmo';

/**
 * Replays (issue 40) through a kill -9 of hub-api, a kill -9 of the delivery worker and a PostgreSQL
 * killed -9 and started again, each in the middle of two replays running at once: one to an
 * unordered subscription, one to an ordered one (several events per entity). The events are stored
 * before any subscription exists, so every one of them must get exactly one delivery per
 * subscription from its replay: none twice (the batch and its cursor commit together), none lost
 * (the replay resumes from its cursor), each delivered, and the ordered one's deliveries of an entity
 * numbered 1, 2, 3… in recebido_em order and first received in that order.
 */
const EVENTOS = 1_200;
const ENTIDADES = 30;
const LIVRE = '/reproduzida';
const ORDENADA = '/reproduzida-ordenada';

let postgres: PrivatePostgres;
let palco: Palco;

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  palco = await montarPalco({
    postgresUrl: postgres.url,
    env: {
      // Small batches with a pause: the replays take long enough to be hit in their middle.
      'hub-api': {
        HUB_API_PORT: String(await portaLivre()),
        HUB_REPRODUCAO_LOTE: '30',
        HUB_REPRODUCAO_PAUSA: '400ms',
        HUB_REPRODUCAO_INTERVALO: '500ms',
      },
      'delivery-worker': ENTREGADOR_RAPIDO,
    },
  });
  palco.db.on('error', () => undefined);
}, 240_000);

afterAll(async () => {
  await palco?.encerrar();
  await postgres?.close();
}, 120_000);

type Gw = <T = { id: string }>(method: string, path: string, body?: unknown) => Promise<T>;

/** The gateway as a master, retried while a fault answers 5xx or nothing. */
async function comoMaster(platform: Platform): Promise<Gw> {
  const master = await platform.userToken('master.replay@empresa.com.br', { master: true });
  return async <T>(method: string, path: string, body?: unknown) => {
    let ultima = '';
    for (let i = 0; i < 120; i++) {
      const r = await api<T>(platform.gatewayUrl, master, method, path, body).catch((e: Error) => ({
        status: 0,
        body: e.message as T,
      }));
      if (r.status > 0 && r.status < 300) return r.body;
      if (r.status >= 400 && r.status < 500)
        throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      ultima = `${r.status} ${JSON.stringify(r.body)}`;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error(`${method} ${path}: still ${ultima}`);
  };
}

/** The type with EVENTOS stored events (as publication stores them), then the two subscriptions. */
async function preparar(gw: Gw, assinante: Assinante, db: pg.Client) {
  const loja = await gw('POST', '/aplicativo', { nome: 'Loja replay', client_id: 'loja-replay' });
  const erp = await gw('POST', '/aplicativo', { nome: 'ERP replay', client_id: 'erp-replay' });
  const tipo = await gw('POST', '/tipo-de-evento', { nome: 'pedido.replay', aplicativo_id: loja.id });
  await gw('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.id, esquema: { type: 'object' } });
  // One second apart from 2026-01-01, entity n % ENTIDADES, ids in receipt order.
  await db.query(
    `insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                         ocorrido_em, recebido_em, dados)
     select gen_random_uuid(), $1, 1, $2, 'pedido-' || (n % $4), t, t, json_build_object('n', n)
       from generate_series(1, $3) as n, lateral (select timestamptz '2026-01-01T00:00:00Z' + n * interval '1 second') as x(t)`,
    [tipo.id, loja.id, EVENTOS, ENTIDADES],
  );
  const assinar = (caminho: string, ordenada: boolean) =>
    gw('POST', '/assinatura', {
      aplicativo_assinante_id: erp.id,
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      url_de_destino: assinante.url(caminho),
      entrega_ordenada: ordenada,
    });
  return { livre: (await assinar(LIVRE, false)).id, ordenada: (await assinar(ORDENADA, true)).id };
}

interface Reproducao {
  id: string;
  situacao: string;
  quantidade_de_eventos: number;
  criadas: number;
  reenviadas: number;
  ignoradas: number;
}

test('When hub-api and the worker are killed -9 and PostgreSQL restarted during two replays, then each resumes and concludes, every event has exactly one delivery per subscription, each received, ordered ones in recebido_em order', async () => {
  const { platform, assinante, db } = palco;
  const gw = await comoMaster(platform);
  const { livre, ordenada } = await preparar(gw, assinante, db);
  const faixa = { desde: '2026-01-01T00:00:00Z', ate: '2026-01-02T00:00:00Z' };
  const [rl, ro] = [
    await gw<Reproducao>('POST', `/assinatura/${livre}/reproduzir`, faixa),
    await gw<Reproducao>('POST', `/assinatura/${ordenada}/reproduzir`, faixa),
  ];
  const ler = (id: string) => gw<Reproducao>('GET', `/reproducao/${id}`);
  const quando = (id: string, minimo: number) =>
    waitFor(async () => (await ler(id)).criadas >= minimo, {
      timeoutMs: 120_000,
      intervalMs: 100,
      what: `${minimo} created`,
    });
  const noMeio: Reproducao[] = [];

  await quando(rl.id, EVENTOS / 5);
  noMeio.push(await ler(rl.id));
  await platform.reiniciar('hub-api');
  await quando(rl.id, (EVENTOS * 2) / 5);
  noMeio.push(await ler(rl.id));
  await platform.reiniciar('delivery-worker');
  await quando(rl.id, (EVENTOS * 3) / 5);
  noMeio.push(await ler(rl.id));
  await postgres.restart('kill');

  const fim = async (id: string) =>
    waitFor(
      async () => {
        const r = await ler(id);
        return r.situacao === 'concluida' ? r : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 500, what: 'the replay to conclude' },
    );
  const [fl, fo] = [await fim(rl.id), await fim(ro.id)];
  // Each fault came while the replay was under way, not before it began nor after it ended.
  expect(noMeio.map((r) => r.situacao)).toEqual(['em_andamento', 'em_andamento', 'em_andamento']);
  expect(noMeio.every((r) => r.criadas < EVENTOS)).toBe(true);
  for (const f of [fl, fo])
    expect(f).toMatchObject({ quantidade_de_eventos: EVENTOS, criadas: EVENTOS, reenviadas: 0, ignoradas: 0 });

  // The stage's connection died with PostgreSQL: a new one.
  const banco = new pg.Client({ connectionString: platform.databases['hub-api'] });
  await banco.connect();
  try {
    for (const assinatura of [livre, ordenada]) {
      const { rows } = await banco.query<{ eventos: number; entregas: number }>(
        `select count(distinct evento_id)::int as eventos, count(*)::int as entregas from entrega where assinatura_id = $1`,
        [assinatura],
      );
      expect(rows[0]).toEqual({ eventos: EVENTOS, entregas: EVENTOS });
    }
    await waitFor(
      async () =>
        (
          await banco.query<{ n: number }>(
            `select count(*)::int as n from entrega where assinatura_id = any($1::uuid[]) and situacao <> 'concluida'`,
            [[livre, ordenada]],
          )
        ).rows[0]!.n === 0,
      { timeoutMs: 180_000, intervalMs: 1_000, what: 'every replayed delivery concluded' },
    );
    await conferirRecebidas(banco, assinante, livre, LIVRE);
    await conferirRecebidas(banco, assinante, ordenada, ORDENADA);
    await conferirOrdem(banco, assinante, ordenada);
  } finally {
    await banco.end();
  }
}, 600_000);

/** Every delivery of the subscription arrived (at least once: a copy after a kill -9 keeps its webhook-id), and nothing else did. */
async function conferirRecebidas(banco: pg.Client, assinante: Assinante, assinatura: string, caminho: string) {
  const { rows } = await banco.query<{ id: string }>(`select id::text from entrega where assinatura_id = $1`, [
    assinatura,
  ]);
  const recebidas = new Set(assinante.de(caminho).map((r) => String(r.cabecalhos['webhook-id'])));
  expect([...recebidas].sort()).toEqual(rows.map((r) => r.id).sort());
}

/** Per entity: sequencia 1..k in the events' recebido_em order, first received in that order. */
async function conferirOrdem(banco: pg.Client, assinante: Assinante, assinatura: string) {
  const { rows } = await banco.query<{ entidade_id: string; sequencias: string[] }>(
    `select en.entidade_id, array_agg(en.sequencia::text order by e.recebido_em, e.id) as sequencias
       from entrega en join evento e on e.id = en.evento_id where en.assinatura_id = $1 group by en.entidade_id`,
    [assinatura],
  );
  const numeradasFora = rows.filter((r) => r.sequencias.some((s, i) => Number(s) !== i + 1)).map((r) => r.entidade_id);
  expect(numeradasFora).toEqual([]);
  const primeiras = new Map<string, number[]>();
  for (const r of [...assinante.de(ORDENADA)].sort((a, b) => a.em - b.em)) {
    const corpo = JSON.parse(r.corpo.toString('utf8')) as { entidade_id: string; sequencia: number };
    const vistas = primeiras.get(corpo.entidade_id) ?? [];
    if (!vistas.includes(corpo.sequencia)) vistas.push(corpo.sequencia);
    primeiras.set(corpo.entidade_id, vistas);
  }
  expect([...primeiras].filter(([, vistas]) => vistas.some((s, i) => s !== i + 1)).map(([e]) => e)).toEqual([]);
  expect(primeiras.size).toBe(ENTIDADES);
}

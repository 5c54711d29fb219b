import { createHubClient, type Evento } from '@hub/client';
import { waitFor } from '@hub/testing';
import { api } from '../http-client';
import type { Platform } from '../platform';
import { montarPalco, type Palco } from '../e2e/palco';
import { type Assinante, portaLivre } from '../e2e/receptor';

/**
 * Issue 10's fault drill on the whole platform: a burst of 2,000 events published through the
 * gateway by publishers retrying as @hub/client does (one Idempotency-Key per event, kept across
 * retries), the delivery worker and hub-api killed with -9 in the middle and started again. Every
 * accepted event's deliveries must end concluida, each with exactly one successful attempt
 * (nothing completed twice as state); duplicates on the wire are allowed, counted and reported.
 */
const EVENTOS = 2_000;
const PUBLICADORES = 20;

let palco: Palco;
let platform: Platform;
let assinante: Assinante;
let db: Palco['db'];

beforeAll(async () => {
  const porta = await portaLivre();
  palco = await montarPalco({
    env: {
      // hub-api comes back on the address the gateway and the worker know.
      'hub-api': { HUB_API_PORT: String(porta) },
      'delivery-worker': {
        DELIVERY_RETRY_DELAYS: '200ms,500ms',
        DELIVERY_SWEEP_INTERVAL: '2s',
        DELIVERY_SWEEP_AGE: '5s',
      },
    },
  });
  ({ platform, assinante, db } = palco);
}, 240_000);

afterAll(() => palco?.encerrar(), 60_000);

test('When the worker and hub-api are killed with -9 during a burst of 2,000 events and started again, then every accepted event is delivered and concluded exactly once as state', async () => {
  const master = await platform.userToken('master.rajada@empresa.com.br', { master: true });
  const gw = <T = { id: string }>(method: string, path: string, body?: unknown) =>
    api<T>(platform.gatewayUrl, master, method, path, body);
  const loja = await gw('POST', '/aplicativo', { nome: 'Loja da rajada', client_id: 'loja-rajada' });
  const erp = await gw('POST', '/aplicativo', { nome: 'ERP da rajada', client_id: 'erp-rajada' });
  const tipo = await gw('POST', '/tipo-de-evento', { nome: 'pedido.rajada', aplicativo_id: loja.body.id });
  await gw('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.body.id, esquema: { type: 'object' } });
  for (const caminho of ['/a', '/b'])
    expect(
      (
        await gw('POST', '/assinatura', {
          aplicativo_assinante_id: erp.body.id,
          tipo_de_evento_id: tipo.body.id,
          versao_do_esquema: 1,
          url_de_destino: assinante.url(caminho),
          maximo_de_tentativas: 10,
        })
      ).status,
    ).toBe(201);

  const token = await platform.applicationToken('loja-rajada');
  // Generous retries: hub-api is away for a few seconds while it starts again.
  const cliente = createHubClient({
    baseUrl: platform.gatewayUrl,
    token: () => token,
    retry: { maxAttempts: 40, baseDelayMs: 100, maxDelayMs: 1_000 },
  });
  const aceitos: Evento[] = [];
  const falhas: string[] = [];
  const reinicios: Promise<void>[] = [];
  let proximo = 0;
  const inicio = performance.now();
  await Promise.all(
    Array.from({ length: PUBLICADORES }, async () => {
      while (proximo < EVENTOS) {
        const n = proximo++;
        try {
          aceitos.push(
            await cliente.publish({
              tipo_de_evento_id: tipo.body.id,
              versao_do_esquema: 1,
              entidade_id: `pedido-${n}`,
              dados: { n },
            }),
          );
        } catch (error) {
          falhas.push(`${n}: ${(error as Error).message}`);
        }
        if (aceitos.length === 500 && reinicios.length === 0) reinicios.push(platform.reiniciar('delivery-worker'));
        if (aceitos.length === 1_000 && reinicios.length === 1) reinicios.push(platform.reiniciar('hub-api'));
      }
    }),
  );
  const publicacao = (performance.now() - inicio) / 1000;
  await Promise.all(reinicios);
  expect(reinicios).toHaveLength(2);
  expect(falhas).toEqual([]);
  expect(new Set(aceitos.map((e) => e.id)).size).toBe(EVENTOS);

  const ids = aceitos.flatMap((e) => e.entregas.map((en) => en.id));
  expect(ids).toHaveLength(2 * EVENTOS);
  const fimDaPublicacao = performance.now();
  const abertas = async () =>
    Number(
      (
        await db.query<{ n: string }>(
          `select count(*) as n from entrega where id = any($1::uuid[]) and situacao <> 'concluida'`,
          [ids],
        )
      ).rows[0]!.n,
    );
  await waitFor(async () => (await abertas()) === 0, {
    timeoutMs: 180_000,
    intervalMs: 500,
    what: `the ${ids.length} deliveries of the accepted events concluded`,
  });
  const ateConcluir = (performance.now() - fimDaPublicacao) / 1000;

  // Every accepted event is stored with its two deliveries, and each delivery has exactly one success.
  const eventos = await db.query<{ n: string }>(`select count(*) as n from evento where id = any($1::uuid[])`, [
    aceitos.map((e) => e.id),
  ]);
  expect(Number(eventos.rows[0]!.n)).toBe(EVENTOS);
  const sucessos = await db.query<{ entrega_id: string; n: string }>(
    `select entrega_id::text, count(*) filter (where sucesso) as n from tentativa
      where entrega_id = any($1::uuid[]) group by entrega_id`,
    [ids],
  );
  expect(sucessos.rows).toHaveLength(ids.length);
  expect(sucessos.rows.filter((r) => Number(r.n) !== 1)).toEqual([]);

  // On the wire: every delivery arrived; some more than once (a redelivered job whose ack died with a process).
  const recebidas = [...assinante.de('/a'), ...assinante.de('/b')].map((r) => String(r.cabecalhos['webhook-id']));
  const distintas = new Set(recebidas);
  expect(ids.filter((id) => !distintas.has(id))).toEqual([]);
  const duplicadas = recebidas.length - distintas.size;
  console.log(
    `kill -9 burst: ${EVENTOS} events accepted in ${publicacao.toFixed(1)} s (${Math.round(EVENTOS / publicacao)}/s, ` +
      `the worker killed after 500 and hub-api after 1,000, both started again); all ${ids.length} deliveries ` +
      `concluded ${ateConcluir.toFixed(1)} s after the last acceptance; ${recebidas.length} requests on the wire, ` +
      `${duplicadas} duplicates (${distintas.size} distinct webhook-ids)`,
  );
}, 400_000);

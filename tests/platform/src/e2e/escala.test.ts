import { createHubClient } from '@hub/client';
import { waitFor } from '@hub/testing';
import { api } from '../http-client';
import type { Platform } from '../platform';
import { montarPalco, type Palco } from './palco';
import type { Assinante } from './receptor';

/**
 * Scale-out (issue 10): two hub-api and two delivery-worker processes against one RabbitMQ and one
 * PostgreSQL, behind one gateway that spreads requests over both hub-apis. Both hub-apis accept
 * publications and both workers attempt deliveries, and no delivery is completed twice as state.
 */
let palco: Palco;
let platform: Platform;
let assinante: Assinante;
let db: Palco['db'];

beforeAll(async () => {
  palco = await montarPalco({ instancias: 2 });
  ({ platform, assinante, db } = palco);
}, 240_000);

afterAll(() => palco?.encerrar(), 60_000);

/** One counter of a process's /metrics (summed over its labels). */
async function contador(url: string, nome: string): Promise<number> {
  const texto = await (await fetch(`${url}/metrics`)).text();
  return texto
    .split('\n')
    .filter((l) => l.startsWith(`${nome}{`) || l.startsWith(`${nome} `))
    .reduce((soma, l) => soma + Number(l.split(' ').at(-1)), 0);
}

test('When two hub-apis and two workers run behind one gateway, then both hub-apis accept publications, both workers deliver, and every delivery is concluded once', async () => {
  expect(platform.enderecos('hub-api')).toHaveLength(2);
  expect(platform.enderecos('delivery-worker')).toHaveLength(2);
  const master = await platform.userToken('master.escala@empresa.com.br', { master: true });
  const gw = (method: string, path: string, body?: unknown) =>
    api<{ id: string }>(platform.gatewayUrl, master, method, path, body);
  const loja = await gw('POST', '/aplicativo', { nome: 'Loja da escala', client_id: 'loja-escala' });
  const erp = await gw('POST', '/aplicativo', { nome: 'ERP da escala', client_id: 'erp-escala' });
  const tipo = await gw('POST', '/tipo-de-evento', { nome: 'pedido.escala', aplicativo_id: loja.body.id });
  await gw('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.body.id, esquema: { type: 'object' } });
  for (const caminho of ['/a', '/b', '/c'])
    await gw('POST', '/assinatura', {
      aplicativo_assinante_id: erp.body.id,
      tipo_de_evento_id: tipo.body.id,
      versao_do_esquema: 1,
      url_de_destino: assinante.url(caminho),
    });

  const token = await platform.applicationToken('loja-escala');
  const cliente = createHubClient({ baseUrl: platform.gatewayUrl, token: () => token });
  const eventos = await Promise.all(
    Array.from({ length: 300 }, (_, i) =>
      cliente.publish({ tipo_de_evento_id: tipo.body.id, versao_do_esquema: 1, entidade_id: `p-${i}`, dados: { i } }),
    ),
  );
  const ids = eventos.flatMap((e) => e.entregas.map((en) => en.id));
  expect(ids).toHaveLength(900);
  await waitFor(
    async () =>
      Number(
        (
          await db.query<{ n: string }>(
            `select count(*) as n from entrega where id = any($1::uuid[]) and situacao = 'concluida'`,
            [ids],
          )
        ).rows[0]!.n,
      ) === ids.length,
    { timeoutMs: 60_000, intervalMs: 250, what: 'every delivery concluded' },
  );
  const duplas = await db.query(
    `select entrega_id from tentativa where entrega_id = any($1::uuid[]) and sucesso group by entrega_id having count(*) > 1`,
    [ids],
  );
  expect(duplas.rows).toEqual([]);

  const aceitosPorHubApi = await Promise.all(
    platform.enderecos('hub-api').map((url) => contador(url, 'hub_eventos_aceitos_total')),
  );
  expect(aceitosPorHubApi.reduce((a, b) => a + b, 0)).toBe(300);
  expect(aceitosPorHubApi.every((n) => n > 0)).toBe(true);
  const tentativasPorWorker = await Promise.all(
    platform.enderecos('delivery-worker').map((url) => contador(url, 'hub_delivery_attempts_total')),
  );
  expect(tentativasPorWorker.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(900);
  expect(tentativasPorWorker.every((n) => n > 0)).toBe(true);
  console.log(
    `scale-out: events accepted per hub-api ${aceitosPorHubApi.join(' / ')}, attempts per worker ${tentativasPorWorker.join(' / ')}`,
  );
});

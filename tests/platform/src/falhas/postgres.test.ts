import { type PrivatePostgres, startPrivatePostgres } from '@hub/testing';
import { montarPalco, type Palco } from '../e2e/palco';
import { conferir, conferirRegistros } from './conferencia';
import { prepararPublicacao, rajadaComFalha } from './ensaio';
import { ENTREGADOR_RAPIDO, RITMO } from './ritmo';

/**
 * Issue 18, scenario (a): every service's database on a PostgreSQL server of the test's own,
 * stopped in fast mode (as `pg_ctlcluster … restart` does: clients get 57P01), down for 3 s, and
 * started again while publications arrive through the gateway. Publications refused meanwhile must be problem+json
 * 503 `banco_indisponivel` with Retry-After; the publisher sends them again.
 */
const FORA_MS = 3_000;
let postgres: PrivatePostgres;
let palco: Palco;

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  palco = await montarPalco({ postgresUrl: postgres.url, env: { 'delivery-worker': ENTREGADOR_RAPIDO } });
  // The stage's own connection to hub-api's database gets 57P01 too; it is not what is tested.
  palco.db.on('error', () => undefined);
}, 180_000);

afterAll(async () => {
  await palco?.encerrar();
  await postgres?.close();
}, 120_000);

test('When PostgreSQL is restarted during a burst of publications, then refusals are 503 banco_indisponivel with Retry-After, no accepted event is lost, copies keep their webhook-id and every service is the same process', async () => {
  const { platform, assinante } = palco;
  const publicacao = await prepararPublicacao(platform, assinante, 'postgres');
  const resultado = await rajadaComFalha(
    {
      platform,
      assinante,
      ...RITMO,
      falha: async () => {
        await postgres.stop('fast');
        // Down for a while, as in a failover or a minor upgrade (a bare restart is over in half a second).
        await new Promise((resolve) => setTimeout(resolve, FORA_MS));
        await postgres.start();
      },
    },
    publicacao,
  );
  await conferir('PostgreSQL restarted', platform, assinante, resultado, { porSegundo: RITMO.porSegundo });
  await conferirRegistros(platform);
  expect(
    [...new Set(resultado.recusas.map((r) => `${r.status} ${r.codigo}`))].filter((r) => r !== '503 banco_indisponivel'),
  ).toEqual([]);
}, 240_000);

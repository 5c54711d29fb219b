import {
  desmontarPalcoPatroni,
  ensaioNoCluster,
  montarPalcoPatroni,
  type PalcoPatroni,
  RITMO_PATRONI,
  recusasPorTipo,
} from './patroni';

/**
 * A planned switchover (`patronictl switchover --force`, as an operator does before maintenance of
 * the primary's host) mid-burst: the primary stops (its clients get 57P01), the synchronous standby
 * is promoted, the former primary comes back as a standby of it, and HAProxy's read-write port moves
 * over. Nothing accepted is lost; the refusals are counted and reported.
 */
let p: PalcoPatroni;

beforeAll(async () => {
  p = await montarPalcoPatroni();
}, 240_000);
afterAll(() => desmontarPalcoPatroni(p), 120_000);

test('When a switchover is made mid-burst, then every accepted event is stored and delivered, refusals are 503 with Retry-After and every service is the same process', async () => {
  const { cluster } = p;
  const antigo = await cluster.primario();
  const sincrono = await cluster.standbySincrono();
  let troca = { de: '', para: '' };
  const { resultado, numeros } = await ensaioNoCluster(p, 'patroni_switchover', async () => {
    troca = await cluster.switchover();
  });
  expect(troca).toEqual({ de: antigo, para: sincrono });
  // The former primary follows the new one: three members again, one of them the synchronous standby.
  expect((await cluster.cluster()).map((m) => m.name).sort()).toEqual(cluster.membros);
  console.log(
    `patroni-switchover: ${RITMO_PATRONI.eventos} publications, ${antigo} -> ${troca.para} in ${numeros.falhaMs} ms; ` +
      `${numeros.eventosRecusados} events refused at least once, refusals ${JSON.stringify(recusasPorTipo(resultado))}`,
  );
}, 300_000);

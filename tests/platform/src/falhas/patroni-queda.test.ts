import {
  desmontarPalcoPatroni,
  ensaioNoCluster,
  montarPalcoPatroni,
  type PalcoPatroni,
  RITMO_PATRONI,
  recusasPorTipo,
} from './patroni';

/**
 * The primary lost for good mid-burst: its Patroni and its PostgreSQL (postmaster and every
 * backend) killed -9 and never started again. The synchronous standby is promoted (Patroni, once the
 * leader key's ttl runs out), HAProxy's read-write port follows it, and every service goes on on the
 * same URL: its pools drop the connections that died, the LISTEN connection comes back on the new
 * primary. Nothing answered 201/202 is lost (synchronous_mode: it was on the standby too).
 */
let p: PalcoPatroni;

beforeAll(async () => {
  p = await montarPalcoPatroni();
}, 240_000);
afterAll(() => desmontarPalcoPatroni(p), 120_000);

test('When the primary is killed -9 mid-burst and never started again, then a standby is promoted, every accepted event is stored and delivered, refusals are 503 with Retry-After and every service is the same process', async () => {
  const { cluster } = p;
  const antigo = await cluster.primario();
  const sincrono = await cluster.standbySincrono();
  const morte = { inicio: 0, fim: 0, promovido: 0 };
  let novo = '';
  const { resultado, leituras } = await ensaioNoCluster(p, 'patroni_queda', async () => {
    morte.inicio = Date.now();
    await cluster.kill(antigo);
    morte.fim = Date.now();
    novo = await cluster.primario(antigo);
    morte.promovido = Date.now();
  });
  expect(cluster.running(antigo)).toBe(false);
  expect(novo).toBe(sincrono);
  // The first answer 2xx once a standby leads: a commit on the new primary (nothing could commit
  // between the kill and the promotion; an answer then would be of a commit made before the kill).
  const primeira = resultado.aceitacoes.filter((a) => a.em >= morte.promovido).sort((a, b) => a.em - b.em)[0];
  expect(primeira).toBeDefined();
  const aceitoDeNovoMs = primeira!.em - morte.inicio;
  // How long publications waited for their answer, the slowest, after the promotion (the backlog the outage left).
  const espera = Math.max(
    ...resultado.aceitacoes.filter((a) => a.enviadaEm >= morte.fim).map((a) => a.em - a.enviadaEm),
  );
  console.log(
    `patroni-queda: ${RITMO_PATRONI.eventos} publications, primary ${antigo} killed after ${RITMO_PATRONI.falhaApos}, ${novo} promoted; ` +
      `kill to promotion ${morte.promovido - morte.inicio} ms, to the first publication accepted on the new primary ${aceitoDeNovoMs} ms; ` +
      `slowest answer to a publication sent after the kill ${espera} ms; refusals ${JSON.stringify(recusasPorTipo(resultado))}`,
  );
  // The panel read on the replica (HUB_DATABASE_READ_URL) while no primary could commit anything.
  const semPrimario = leituras.filter((l) => l.enviadaEm > morte.fim + 1_000 && l.enviadaEm < morte.promovido);
  console.log(
    `patroni-queda: panel reads sent between the kill and the promotion: ${semPrimario.filter((l) => l.status === 200).length} of ${semPrimario.length} answered 200`,
  );
  expect(semPrimario.length).toBeGreaterThan(0);
  expect(semPrimario.filter((l) => l.status === 200).length).toBeGreaterThan(semPrimario.length / 2);
  // Generous: ttl 10 s, loop_wait 1 s, HAProxy's checks 2 s; not a timing assertion on speed.
  expect(aceitoDeNovoMs).toBeLessThan(60_000);
}, 300_000);

import {
  desmontarPalcoPatroni,
  ensaioNoCluster,
  montarPalcoPatroni,
  type PalcoPatroni,
  RITMO_PATRONI,
  recusasPorTipo,
} from './patroni';

/**
 * The synchronous standby lost for good (its Patroni and PostgreSQL killed -9) while the primary
 * stays. The primary's commits wait for that standby's acknowledgement until Patroni's next loop
 * (loop_wait, 1 s here) sees it gone: with synchronous_mode and a third member streaming, Patroni
 * names the third the synchronous standby (synchronous_standby_names), and the waiting commits go
 * through. Publications go on; nothing accepted is lost. (Were no standby left, synchronous_mode
 * without synchronous_mode_strict would let the primary commit alone; strict would stop writes.)
 */
let p: PalcoPatroni;

beforeAll(async () => {
  p = await montarPalcoPatroni();
}, 240_000);
afterAll(() => desmontarPalcoPatroni(p), 120_000);

test('When the synchronous standby is killed -9 mid-burst, then the primary stays, the third member becomes the synchronous standby and every accepted event is stored and delivered', async () => {
  const { cluster } = p;
  const primario = await cluster.primario();
  const sincrono = await cluster.standbySincrono();
  const terceiro = cluster.membros.find((m) => m !== primario && m !== sincrono)!;
  let novoSincrono = '';
  const { resultado, numeros } = await ensaioNoCluster(p, 'patroni_sincrono', async () => {
    await cluster.kill(sincrono);
    novoSincrono = await cluster.standbySincrono(sincrono);
  });
  expect(await cluster.primario()).toBe(primario);
  expect(novoSincrono).toBe(terceiro);
  console.log(
    `patroni-sincrono: ${RITMO_PATRONI.eventos} publications, synchronous standby ${sincrono} killed, ${terceiro} named in ${numeros.falhaMs} ms; ` +
      `refusals ${JSON.stringify(recusasPorTipo(resultado))}; longest gap without deliveries ${numeros.entregasParadasMs} ms`,
  );
  // The primary never went away: no publication was refused for the database.
  expect(resultado.recusas.filter((r) => r.codigo === 'banco_indisponivel')).toEqual([]);
}, 300_000);

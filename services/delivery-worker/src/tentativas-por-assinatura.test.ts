import { tresDestinos } from './tres-destinos.test-support';

// GET /tentativa?assinatura_id= reads tentativa.assinatura_id (migration 026), which the worker's record
// writes from the delivery it updates in the same statement. Here the trigger that fills it for an
// insert that leaves it out (a worker of the previous version) is disabled, so a record that did not
// write it would fail on NOT NULL and its deliveries would never end. Then each subscription's
// attempts read by the column (what GET /tentativa?assinatura_id reads; its SQL is tested in hub-api,
// features/tentativas) must be exactly the attempts of its deliveries, found through entrega as before
// the column.
const { f, entregarATodas } = tresDestinos((hub) =>
  hub.db.$executeRawUnsafe('alter table tentativa disable trigger tentativa_sem_assinatura').then(() => undefined),
);

test("When the worker records the attempts of several subscriptions' deliveries, then each attempt carries its delivery's subscription: read by the column, each subscription's attempts are exactly those of its deliveries", async () => {
  const assinaturas = await entregarATodas(12);

  // every attempt carries its delivery's subscription
  const [diferentes] = await f.hub.db.$queryRaw<{ n: number }[]>`
    select count(*)::int as n from tentativa t join entrega e on e.id = t.entrega_id
     where t.assinatura_id is distinct from e.assinatura_id`;
  expect(diferentes!.n).toBe(0);

  const esperadas = async (assinaturaId: string, sucesso?: boolean) =>
    (
      await f.hub.db.$queryRaw<{ id: string }[]>`
        select t.id::text from tentativa t join entrega e on e.id = t.entrega_id
         where e.assinatura_id = ${assinaturaId}::uuid and (${sucesso ?? null}::boolean is null or t.sucesso = ${sucesso ?? null}::boolean)
         order by t.iniciada_em desc, t.id desc`
    ).map((t) => t.id);
  const pelaColuna = async (assinaturaId: string, sucesso?: boolean) =>
    (
      await f.hub.db.$queryRaw<{ id: string }[]>`
        select id::text from tentativa
         where assinatura_id = ${assinaturaId}::uuid and (${sucesso ?? null}::boolean is null or sucesso = ${sucesso ?? null}::boolean)
         order by iniciada_em desc, id desc`
    ).map((t) => t.id);
  const quantas: number[] = [];
  for (const a of assinaturas) {
    const todas = await esperadas(a.id);
    quantas.push(todas.length);
    expect(await pelaColuna(a.id)).toEqual(todas);
    expect(await pelaColuna(a.id, false)).toEqual(await esperadas(a.id, false));
  }
  // 12 at the first attempt; 3 × 12 failures to the error queue; 12 failures then 12 successes
  expect(quantas).toEqual([12, 36, 24]);
}, 60_000);

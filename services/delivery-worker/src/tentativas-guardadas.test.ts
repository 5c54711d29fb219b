import { tresDestinos } from './tres-destinos.test-support';

// The worker's record inserts a batch's attempts in one statement; tentativa's statement trigger
// (migration 024) adds them to resumo_por_hora's stored counts, on the transaction's slice, where the
// same statement's tallies go too (entregas_concluidas, tentativas_com_falha). Many deliveries at
// once, succeeding and failing: every one ends, none of the records deadlocked, and every hour's
// counts equal the attempts stored.
const { f, entregarATodas } = tresDestinos();

test('When many deliveries succeed, retry and fail at once, then the stored attempts of each hour (all and successful) equal the attempts recorded', async () => {
  await entregarATodas(30);

  const [real, fatias] = await Promise.all([
    f.hub.db.$queryRaw<{ hora: Date; n: number; s: number }[]>`
      select date_trunc('hour', iniciada_em, 'UTC') as hora, count(*)::int as n, count(*) filter (where sucesso)::int as s
        from tentativa group by 1 order by 1`,
    f.hub.db.$queryRaw<{ hora: Date; n: number; s: number }[]>`
      select hora, sum(tentativas_guardadas)::int as n, sum(tentativas_com_sucesso_guardadas)::int as s
        from resumo_por_hora group by hora
      having sum(tentativas_guardadas) <> 0 or sum(tentativas_com_sucesso_guardadas) <> 0 order by hora`,
  ]);
  expect(fatias).toEqual(real);
  // 30 at the first attempt, 3 × 30 failures to the error queue, 30 at the second
  const total = real.reduce((soma, h) => soma + h.n, 0);
  expect(total).toBe(30 + 90 + 60);
  expect(real.reduce((soma, h) => soma + h.s, 0)).toBe(60);
  // the same statements' tallies: every attempt is a conclusion or a failure
  const [tallies] = await f.hub.db.$queryRaw<{ n: number }[]>`
    select (sum(entregas_concluidas) + sum(tentativas_com_falha))::int as n from resumo_por_hora`;
  expect(tallies!.n).toBe(total);
}, 60_000);

import { SqlPool, uuidv7 } from '@hub/database';
import { horaDoResumo } from '@hub/hub-data';
import { waitFor } from '@hub/testing';
import { cenario, createTestHub, type TestHub } from './delivery-worker.test-support';
import { entregasRepository } from './features/entregas/entregas.repository';

// The worker's record adds its tallies to the hour it records in (entregas_concluidas,
// tentativas_com_falha), and tentativa's statement trigger (migration 024) adds the attempts to the
// hour they started in, on the same slice of resumo_por_hora, after the statement. An attempt started
// before the hour turned and recorded after it: the record held the later hour and then waited for
// the earlier one, against any writer that locks hours in order (publication's group write of events
// received on both sides of the turn, on the same slice; retention's batch) — a deadlock (40P01).
const HORA = 3_600_000;

let hub: TestHub;
let sql: SqlPool;
beforeAll(async () => {
  hub = await createTestHub();
  sql = new SqlPool(hub.database.url, 2);
});
afterAll(async () => {
  await sql?.fechar();
  await hub?.close();
});

test('When an attempt started before the hour turned is recorded after it, while another transaction locks both hours in order, then neither is rolled back as a deadlock and the counts are exact', async () => {
  const c = await cenario(hub);
  const assinatura = await c.assinar('https://recebedor.example/webhook');
  const [trabalho] = await c.entregar([assinatura], { publicar: false });
  const antes = horaDoResumo(new Date(Date.now() - HORA));
  const depois = new Date(antes.getTime() + HORA);
  for (const h of [antes, depois])
    await hub.db.$executeRaw`insert into resumo_por_hora (hora, fatia) select ${h}, f from generate_series(0, 15) f
      on conflict do nothing`;
  const repo = entregasRepository(sql, { reivindicacaoMs: 60_000, reivindicacoesAteVeneno: 5 });

  // One connection: a pool of one runs every statement of its transaction on it.
  const outra = new SqlPool(hub.database.url, 1);
  const consultar = (texto: string, valores: unknown[] = []) => outra.consultar(uuidv7(), texto, valores);
  try {
    // Another writer that locks the hours in order holds every slice of the earlier one.
    await consultar('begin');
    await consultar('select 1 from resumo_por_hora where hora = $1 for update', [antes]);
    let registrou = false;
    const registro = repo
      .registrar(
        [
          {
            entrega_id: trabalho!.entrega_id,
            tentativa_id: uuidv7(),
            iniciada_em: new Date(depois.getTime() - 500),
            duracao_ms: 700,
            status_http: 200,
            sucesso: true,
            resposta: 'ok',
            erro: null,
            cabecalhos: {},
            encerrar: false,
            proxima_tentativa_em: null,
            retorno_ate: null,
          },
        ],
        new Date(depois.getTime() + 200),
      )
      .then(
        (linhas) => linhas.length,
        (erro: { code?: string }) => erro.code ?? String(erro),
      )
      .finally(() => {
        registrou = true;
      });
    await waitFor(
      async () =>
        registrou ||
        (
          await hub.db.$queryRaw<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock' and query like '%json_to_recordset%'`
        )[0]!.n > 0,
      { what: 'the record to wait for the earlier hour' },
    );
    const segunda = await consultar('select 1 from resumo_por_hora where hora = $1 for update', [depois]).then(
      () => 'ok',
      (erro: { code?: string }) => erro.code ?? String(erro),
    );
    await consultar(segunda === 'ok' ? 'commit' : 'rollback');
    expect({ segunda, registro: await registro }).toEqual({ segunda: 'ok', registro: 1 });
  } finally {
    await outra.fechar();
  }
  const horas = await hub.db.$queryRaw<{ hora: Date; t: number; s: number; concluidas: number }[]>`
    select hora, sum(tentativas_guardadas)::int as t, sum(tentativas_com_sucesso_guardadas)::int as s,
           sum(entregas_concluidas)::int as concluidas
      from resumo_por_hora where hora in (${antes}, ${depois}) group by hora order by hora`;
  expect(horas).toEqual([
    { hora: antes, t: 1, s: 1, concluidas: 0 },
    { hora: depois, t: 0, s: 0, concluidas: 1 },
  ]);
});

import { horaDoResumo, type Tx } from '@hub/hub-data';
import { waitFor } from '@hub/testing';
import pg from 'pg';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { type Cenario, criarCenario, escritasNoResumo, gravarEvento } from '../eventos/linhas.test-support';
import { assinar, cenario as cenarioDePublicacao, publicar } from '../publicacao/cenario.test-support';

// GET /entrega's total without a filter is the sum of resumo_por_hora.entregas_guardadas, the stored
// deliveries of each hour of criada_em, kept by the statement triggers on entrega (migration 023),
// not a count(*) of entrega. After every kind of write the sums must equal count(*), hour by hour.
const DIA = 86_400_000;
const HORA = 3_600_000;
// The clock of publication and retention: the test moves it, nothing waits.
let agora = new Date('2042-05-14T12:30:00.000Z');
const antes = (ms: number) => new Date(agora.getTime() - ms);

let ctx: Contexto;
let curto: Cenario;
beforeAll(async () => {
  ctx = await iniciarContexto({ relogio: () => agora, env: { HUB_RETENCAO_INTERVALO: '1h' } });
  curto = await criarCenario(ctx, { retencao_em_dias: 1 });
});
afterAll(() => encerrarContexto(ctx));

const ler = () => auth(ctx.leitor);
const db = () => ctx.hub.db;
const total = async () => {
  const response = await ctx.api().get('/entrega').set(ler());
  expect(response.status).toBe(200);
  return response.body.total as number;
};

/** The stored deliveries of each hour, counted in entrega and in resumo_por_hora's slices: must agree. */
async function contagensPorHora() {
  const [real, fatias] = await Promise.all([
    db().$queryRaw<{ hora: Date; n: number }[]>`
      select date_trunc('hour', criada_em, 'UTC') as hora, count(*)::int as n from entrega group by 1 order by 1`,
    db().$queryRaw<{ hora: Date; n: number }[]>`
      select hora, sum(entregas_guardadas)::int as n from resumo_por_hora group by hora
      having sum(entregas_guardadas) <> 0 order by hora`,
  ]);
  return { real, fatias };
}

async function expectTotalExato() {
  const { real, fatias } = await contagensPorHora();
  expect(fatias).toEqual(real);
  expect(await total()).toBe(await db().entrega.count());
}

/** Events of the type kept one day, one `h` hours old for each of `horas`, with `entregas` concluded deliveries each. */
async function expirados(horas: number[], entregas = 2) {
  const eventos = [];
  for (const h of horas)
    eventos.push(
      await gravarEvento(db(), curto, {
        recebidoEm: antes(h * HORA),
        entregas: Array.from({ length: entregas }, () => 'concluida' as const),
      }),
    );
  return eventos;
}

describe('total of GET /entrega, kept per hour in resumo_por_hora', () => {
  test('When deliveries are published one by one and 40 publications at once, then the total and every hourly count equal the stored deliveries', async () => {
    const publicacao = await cenarioDePublicacao(ctx);
    for (let i = 0; i < 3; i++) await assinar(ctx, publicacao.tipo.id);
    const antesDeTudo = await total();
    for (let i = 0; i < 3; i++)
      expect((await publicar(ctx, publicacao.tokenDoDono, publicacao.corpo())).status).toBe(201);
    expect(await total()).toBe(antesDeTudo + 9);

    const respostas = await Promise.all(
      Array.from({ length: 40 }, () => publicar(ctx, publicacao.tokenDoDono, publicacao.corpo())),
    );
    expect(respostas.map((r) => r.status)).toEqual(Array(40).fill(201));
    expect(await total()).toBe(antesDeTudo + 43 * 3);
    await expectTotalExato();
  });

  test('When a slice is off by some deliveries, then the total is off by as many: it is the sum of the hourly counts, not a count of entrega', async () => {
    const exato = await total();
    expect(exato).toBe(await db().entrega.count());
    const hora = horaDoResumo(antes(5 * HORA));
    await db().$executeRaw`
      insert into resumo_por_hora (hora, fatia, entregas_guardadas) values (${hora}, 3, 7)
      on conflict (hora, fatia) do update set entregas_guardadas = resumo_por_hora.entregas_guardadas + 7`;
    expect(await total()).toBe(exato + 7);
    // A filter's total is still counted.
    expect((await ctx.api().get('/entrega').query({ situacao: 'concluida' }).set(ler())).body.total).toBe(
      await db().entrega.count({ where: { situacao: 'concluida' } }),
    );
    await db().$executeRaw`
      update resumo_por_hora set entregas_guardadas = entregas_guardadas - 7 where hora = ${hora} and fatia = 3`;
    await expectTotalExato();
  });

  test("When retention erases events, then the cascade runs entrega's delete trigger once for the batch, hours past 48 h are folded, and the counts stay exact", async () => {
    // Every run of a statement-level delete trigger on entrega, with how many rows it saw.
    await db().$executeRawUnsafe('create table apagadas_por_comando (n integer not null)');
    await db().$executeRawUnsafe(`create function registrar_apagadas() returns trigger language plpgsql as $$
      begin insert into apagadas_por_comando select count(*) from velhas; return null; end $$`);
    await db().$executeRawUnsafe(`create trigger registrar_apagadas after delete on entrega
      referencing old table as velhas for each statement execute function registrar_apagadas()`);
    try {
      await ctx.hub.retencao.runNow();
      await db().$executeRawUnsafe('delete from apagadas_por_comando');
      const eventos = await expirados([30, 30, 49, 49, 50, 72, 72, 200]);
      const recente = await gravarEvento(db(), curto, { recebidoEm: antes(HORA), entregas: ['concluida'] });
      const antesDaRetencao = await total();
      await expectTotalExato();

      const apagados = await ctx.hub.retencao.runNow();

      expect(apagados.eventos).toBe(eventos.length);
      expect(await total()).toBe(antesDaRetencao - 2 * eventos.length);
      await expectTotalExato();
      // The cascade from evento deleted them with one statement per event, but entrega's statement
      // triggers ran once, over all of them: one upsert per hour, not one per event.
      const comandos = await db().$queryRaw<{ n: number }[]>`select n from apagadas_por_comando`;
      expect(comandos.map((c) => c.n)).toEqual([2 * eventos.length]);
      expect(await db().entrega.count({ where: { eventoId: recente.id } })).toBe(1);
      // No slice of an hour past 48 h is left but one row per hour that still holds something.
      const velhas = await db().$queryRaw<{ hora: Date; linhas: number }[]>`
        select hora, count(*)::int as linhas from resumo_por_hora where hora < ${antes(48 * HORA)} group by hora`;
      expect(velhas.filter((h) => h.linhas > 1)).toEqual([]);

      // Two days later the recent one goes too; a second pass finds nothing more to fold.
      agora = new Date(agora.getTime() + 2 * DIA);
      await ctx.hub.retencao.runNow();
      expect(await db().entrega.count({ where: { eventoId: recente.id } })).toBe(0);
      await expectTotalExato();
      expect((await ctx.hub.retencao.runNow()).horas).toBe(0);
    } finally {
      await db().$executeRawUnsafe('drop trigger registrar_apagadas on entrega');
      await db().$executeRawUnsafe('drop function registrar_apagadas()');
      await db().$executeRawUnsafe('drop table apagadas_por_comando');
    }
  });

  test('When an hour past 48 h holds deliveries but no event, then retention folds it into one row and keeps its count', async () => {
    // A delivery whose criada_em is not its event's hour (written by hand: publication makes them equal).
    const [evento] = await expirados([20], 1);
    const hora = horaDoResumo(antes(60 * HORA));
    await db()
      .$executeRaw`update entrega set criada_em = ${new Date(hora.getTime() + 60_000)} where evento_id = ${evento!.id}::uuid`;
    await db().$executeRaw`insert into resumo_por_hora (hora, fatia, eventos) values (${hora}, 9, 1)
      on conflict (hora, fatia) do update set eventos = resumo_por_hora.eventos + 1`;
    await expectTotalExato();

    await ctx.hub.retencao.runNow();
    // One row: the hour's lowest slice, which keeps both counts (retencao.job.ts compactarHoras).
    expect(
      await db().$queryRaw`
        select eventos, eventos_guardados, entregas_guardadas from resumo_por_hora where hora = ${hora}`,
    ).toEqual([{ eventos: 0, eventos_guardados: 0, entregas_guardadas: 1 }]);
    await expectTotalExato();
    // Folded, it is not folded again at every pass.
    expect((await ctx.hub.retencao.runNow()).horas).toBe(0);
  });

  test('When retention runs while deliveries are published, then the total still equals the stored deliveries', async () => {
    const publicacao = await cenarioDePublicacao(ctx);
    await assinar(ctx, publicacao.tipo.id);
    await assinar(ctx, publicacao.tipo.id);
    await expirados(Array.from({ length: 30 }, (_, i) => 25 + i));
    await Promise.all([
      ctx.hub.retencao.runNow(),
      ...Array.from({ length: 20 }, () => publicar(ctx, publicacao.tokenDoDono, publicacao.corpo())),
    ]);
    await expectTotalExato();
  });

  test('When another transaction deletes events of two hours past 48 h, hour after hour, while retention folds those hours, then neither is rolled back as a deadlock and the counts stay exact', async () => {
    // Another hub-api's retention (or an operator) deleting events of two old hours: its triggers
    // upsert the hours' slices on its one slice (fatia_da_transacao), the earlier hour first. Here as
    // two statements of one transaction, so that this instance's fold runs between them.
    const longo = await criarCenario(ctx, { retencao_em_dias: 30 }); // nothing of it expires: the pass only folds
    const h1 = horaDoResumo(antes(71 * HORA));
    const h2 = horaDoResumo(antes(70 * HORA));
    const e1 = await gravarEvento(db(), longo, {
      recebidoEm: new Date(h1.getTime() + 60_000),
      entregas: ['concluida'],
    });
    const e2 = await gravarEvento(db(), longo, {
      recebidoEm: new Date(h2.getTime() + 60_000),
      entregas: ['concluida'],
    });
    // Every slice of both hours, as a busy hour leaves them (so neither hour is folded already).
    for (const h of [h1, h2])
      await db().$executeRaw`insert into resumo_por_hora (hora, fatia) select ${h}, f from generate_series(0, 15) f
        on conflict do nothing`;
    await expectTotalExato();

    const outra = new pg.Client({ connectionString: ctx.hub.databaseUrl });
    await outra.connect();
    try {
      await outra.query('begin');
      const { rows } = await outra.query<{ fatia: number }>('select (txid_current() % 16)::int as fatia');
      const k = rows[0]!.fatia;
      // The later hour's row of that slice lies before the earlier one's in the table (rewritten in
      // that order, same values): a fold that locks in the order it scans meets the later one first.
      await db().$transaction(async (tx) => {
        const linhas = await tx.$queryRaw<{ hora: Date; eventos_guardados: number; entregas_guardadas: number }[]>`
          delete from resumo_por_hora where hora in (${h1}, ${h2}) and fatia = ${k}
          returning hora, eventos_guardados, entregas_guardadas`;
        for (const h of [h2, h1]) {
          const l = linhas.find((x) => x.hora.getTime() === h.getTime())!;
          await tx.$executeRaw`insert into resumo_por_hora (hora, fatia, eventos_guardados, entregas_guardadas)
            values (${h}, ${k}, ${l.eventos_guardados}, ${l.entregas_guardadas})`;
        }
      });

      await outra.query('delete from evento where id = $1::uuid', [e1.id]);
      let passou = false;
      const passe = ctx.hub.retencao
        .runNow()
        .then(
          (apagados) => ({ apagados }),
          (erro: unknown) => ({ erro: String(erro) }),
        )
        .finally(() => {
          passou = true;
        });
      // The fold waited for the other transaction's slice of the earlier hour; now it skips it
      // (SKIP LOCKED) and ends, folding the hour's other slices.
      await waitFor(
        async () =>
          (
            await db().$queryRaw<{ n: number }[]>`
              select count(*)::int as n from pg_stat_activity
               where datname = current_database() and wait_event_type = 'Lock' and query like '%resumo_por_hora%'`
          )[0]!.n > 0 || passou,
        { what: 'the fold to wait for a row lock, or to end' },
      );
      const segunda = await outra.query('delete from evento where id = $1::uuid', [e2.id]).then(
        () => 'ok',
        (erro: { code?: string }) => erro.code ?? String(erro),
      );
      await outra.query(segunda === 'ok' ? 'commit' : 'rollback');

      expect({ segunda, passe: await passe }).toEqual({ segunda: 'ok', passe: { apagados: expect.any(Object) } });
    } finally {
      await outra.end();
    }
    expect(await db().evento.count({ where: { id: { in: [e1.id, e2.id] } } })).toBe(0);
    await expectTotalExato();
    // The slices the pass skipped are folded by the next one: then each hour is one row, or none.
    await ctx.hub.retencao.runNow();
    await expectTotalExato();
    const linhas = await db().$queryRaw<{ n: number }[]>`
      select count(*)::int as n from resumo_por_hora where hora in (${h1}, ${h2}) group by hora`;
    expect(linhas.every((l) => l.n === 1)).toBe(true);
  });

  test('When an operator deletes deliveries, and events (the cascade takes theirs), with plain SQL, then the counts stay exact', async () => {
    const eventos = [
      await gravarEvento(db(), curto, { recebidoEm: antes(2 * HORA), entregas: ['concluida', 'fila_de_erro'] }),
      await gravarEvento(db(), curto, { recebidoEm: antes(3 * HORA), entregas: ['cancelada', 'pendente'] }),
      await gravarEvento(db(), curto, { recebidoEm: antes(3 * HORA), entregas: ['concluida'] }),
    ];
    await expectTotalExato();
    const antesDeApagar = await total();

    const avulsas = [eventos[0]!.entregas[1], eventos[1]!.entregas[0]];
    await db().$executeRaw`delete from entrega where id = any(${avulsas}::uuid[])`;
    expect(await total()).toBe(antesDeApagar - 2);
    await expectTotalExato();
    await db().$executeRaw`delete from evento where id = any(${[eventos[1]!.id, eventos[2]!.id]}::uuid[])`;
    expect(await total()).toBe(antesDeApagar - 4);
    await expectTotalExato();
  });

  test("When an operator moves a delivery's criada_em to another hour, then its count moves with it; other updates change nothing", async () => {
    const { entregas } = await gravarEvento(db(), curto, { recebidoEm: antes(4 * HORA), entregas: ['concluida'] });
    const id = entregas[0];
    await db().$executeRaw`update entrega set criada_em = criada_em - interval '3 hours' where id = ${id}::uuid`;
    await expectTotalExato();
    await db().$executeRaw`update entrega set criada_em = criada_em + interval '1 millisecond' where id = ${id}::uuid`;
    await db().$executeRaw`update entrega set situacao = 'cancelada', atualizada_em = now() where id = ${id}::uuid`;
    await expectTotalExato();
  });

  test("When an operator moves many deliveries' criada_em to another hour in one statement, then the count moves with one upsert per hour, not two per delivery", async () => {
    // Two per delivery piled up versions of the same rows in one transaction: quadratic (18,000
    // deliveries of one hour moved in 22 s, migration 025).
    const { id } = await gravarEvento(db(), curto, {
      recebidoEm: antes(6 * HORA),
      entregas: Array.from({ length: 300 }, () => 'concluida' as const),
    });
    const escritas = (mover: (tx: Tx) => Promise<unknown>) => escritasNoResumo(db(), mover);
    expect(
      await escritas(
        (tx) => tx.$executeRaw`
        update entrega set criada_em = criada_em - interval '2 hours' where evento_id = ${id}::uuid`,
      ),
    ).toBeLessThanOrEqual(2);
    await expectTotalExato();
    // An upsert that sets criada_em moves it too.
    expect(
      await escritas(
        (tx) => tx.$executeRaw`
        insert into entrega select * from entrega where evento_id = ${id}::uuid
        on conflict (id) do update set criada_em = excluded.criada_em + interval '5 hours'`,
      ),
    ).toBeLessThanOrEqual(2);
    await expectTotalExato();
  });

  test('When a subscribing application lists its own deliveries, then its total counts only its own', async () => {
    const c = await criarCenario(ctx);
    for (const h of [1, 2, 2]) await gravarEvento(db(), c, { recebidoEm: antes(h * HORA), entregas: ['concluida'] });
    const aplicativo = await ctx.api().get(`/aplicativo/${c.assinanteId}`).set(auth(ctx.todas));
    const token = await ctx.identity.appToken(aplicativo.body.client_id as string);
    const proprias = await ctx.api().get('/entregas').set(auth(token));
    expect(proprias.status).toBe(200);
    expect(proprias.body.total).toBe(3);
    expect(await total()).toBeGreaterThan(3);
  });

  test('When entrega is truncated, then every hourly count is zero and the total 0', async () => {
    expect(await total()).toBeGreaterThan(0);
    await db().$executeRaw`truncate entrega cascade`;
    expect(await total()).toBe(0);
    await expectTotalExato();
    expect(await db().resumoPorHora.count({ where: { entregasGuardadas: { not: 0 } } })).toBe(0);
    // Counting starts again from there.
    await gravarEvento(db(), curto, { recebidoEm: antes(HORA), entregas: ['pendente', 'concluida'] });
    expect(await total()).toBe(2);
    await expectTotalExato();
  });

  test("When evento is truncated (its cascade takes entrega), then GET /evento's total and every hour's eventos_guardados are 0 as well, not only GET /entrega's", async () => {
    const totalDeEventos = async () => {
      const response = await ctx.api().get('/evento').set(ler());
      expect(response.status).toBe(200);
      return response.body.total as number;
    };
    await gravarEvento(db(), curto, { recebidoEm: antes(2 * HORA), entregas: ['concluida'] });
    await gravarEvento(db(), curto, { recebidoEm: antes(60 * HORA) });
    expect(await totalDeEventos()).toBe(await db().evento.count());
    expect(await totalDeEventos()).toBeGreaterThan(0);

    await db().$executeRaw`truncate evento cascade`;

    expect(await totalDeEventos()).toBe(0);
    expect(await db().resumoPorHora.count({ where: { eventosGuardados: { not: 0 } } })).toBe(0);
    await expectTotalExato();
    // Counting starts again from there.
    await gravarEvento(db(), curto, { recebidoEm: antes(HORA), entregas: ['pendente'] });
    expect(await totalDeEventos()).toBe(1);
    await expectTotalExato();
  });
});

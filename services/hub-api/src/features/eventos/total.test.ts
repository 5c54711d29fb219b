import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { cenario as cenarioDePublicacao, publicar } from '../publicacao/cenario.test-support';
import { type Cenario, criarCenario, gravarEvento, sqlDaPaginaPorOffset } from './linhas.test-support';

const DIA = 86_400_000;
const HORA = 3_600_000;
// The clock of publication and retention: the test moves it, nothing waits.
let agora = new Date('2041-03-10T12:30:00.000Z');
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
const total = async () => (await ctx.api().get('/evento').set(ler())).body.total as number;

/** The stored events of each hour, counted in evento and in resumo_por_hora's slices: must agree. */
async function contagensPorHora() {
  const [real, fatias] = await Promise.all([
    db().$queryRaw<{ hora: Date; n: number }[]>`
      select date_trunc('hour', recebido_em, 'UTC') as hora, count(*)::int as n from evento group by 1 order by 1`,
    db().$queryRaw<{ hora: Date; n: number }[]>`
      select hora, sum(eventos_guardados)::int as n from resumo_por_hora group by hora
      having sum(eventos_guardados) <> 0 order by hora`,
  ]);
  return { real, fatias };
}

async function expectTotalExato() {
  const { real, fatias } = await contagensPorHora();
  expect(fatias).toEqual(real);
  expect(await total()).toBe(await db().evento.count());
}

describe('total of GET /evento, kept per hour in resumo_por_hora', () => {
  test('When events are published one by one and 40 at once, then total and every hourly count equal the stored events', async () => {
    const publicacao = await cenarioDePublicacao(ctx);
    const antesDeTudo = await total();
    for (let i = 0; i < 3; i++)
      expect((await publicar(ctx, publicacao.tokenDoDono, publicacao.corpo())).status).toBe(201);
    expect(await total()).toBe(antesDeTudo + 3);

    const respostas = await Promise.all(
      Array.from({ length: 40 }, () => publicar(ctx, publicacao.tokenDoDono, publicacao.corpo())),
    );
    expect(respostas.map((r) => r.status)).toEqual(Array(40).fill(201));
    expect(await total()).toBe(antesDeTudo + 43);
    await expectTotalExato();

    // A refused publication is no stored event.
    const recusada = await publicar(ctx, publicacao.tokenDoDono, publicacao.corpo({ dados: { numero: '' } }));
    expect(recusada.status).toBe(422);
    expect(await total()).toBe(antesDeTudo + 43);
  });

  test('When retention erases events and folds the slices of hours past 48 h, then total and every hourly count stay exact', async () => {
    for (const horas of [30, 30, 30, 49, 49, 50, 72, 72, 72, 72, 200])
      await gravarEvento(db(), curto, { recebidoEm: antes(horas * HORA), entregas: ['concluida'] });
    const recente = await gravarEvento(db(), curto, { recebidoEm: antes(HORA) });
    const antesDaRetencao = await total();
    await expectTotalExato();

    const apagados = await ctx.hub.retencao.runNow();

    // The 11 above, and what the first test published (with the real clock, years before this one).
    expect(apagados.eventos).toBeGreaterThanOrEqual(11);
    expect(await total()).toBe(antesDaRetencao - apagados.eventos);
    await expectTotalExato();
    expect(await db().evento.count({ where: { id: recente.id } })).toBe(1);
    // No slice of an hour past 48 h is left but one row per hour that still holds events.
    const velhas = await db().$queryRaw<{ hora: Date; linhas: number }[]>`
      select hora, count(*)::int as linhas from resumo_por_hora where hora < ${antes(48 * HORA)} group by hora`;
    expect(velhas.filter((h) => h.linhas > 1)).toEqual([]);

    // Two days later the recent event goes too, and a second pass finds nothing more to fold.
    agora = new Date(agora.getTime() + 2 * DIA);
    await ctx.hub.retencao.runNow();
    expect(await db().evento.count({ where: { id: recente.id } })).toBe(0);
    await expectTotalExato();
  });

  test('When retention runs while events are published, then total still equals the stored events', async () => {
    const publicacao = await cenarioDePublicacao(ctx);
    for (let i = 0; i < 30; i++) await gravarEvento(db(), curto, { recebidoEm: antes(DIA + i * HORA) });
    await Promise.all([
      ctx.hub.retencao.runNow(),
      ...Array.from({ length: 20 }, () => publicar(ctx, publicacao.tokenDoDono, publicacao.corpo())),
    ]);
    await expectTotalExato();
  });
});

describe('pages of GET /evento found through the hourly counts', () => {
  test('When every page is read at several sizes, then each is exactly the plain OFFSET page, and past the last one itens is empty', async () => {
    // Events over several hours, ties in one millisecond, an hour boundary exactly, hours left empty.
    const base = Date.parse('2041-03-20T00:00:00.000Z');
    for (const ms of [0, 0, 0, 1, HORA - 1, HORA, HORA, 3 * HORA + 5, 3 * HORA + 5, 5 * HORA, 26 * HORA, 26 * HORA + 1])
      await gravarEvento(db(), curto, { recebidoEm: new Date(base + ms) });
    const quantos = await db().evento.count();
    for (const tamanho of [1, 3, 7, 10]) {
      const paginas = Math.ceil(quantos / tamanho) + 1;
      for (let pagina = 1; pagina <= paginas; pagina++) {
        const response = await ctx.api().get('/evento').query({ pagina, tamanho }).set(ler());
        const esperados = await db().$queryRaw<{ id: string }[]>(sqlDaPaginaPorOffset({ pagina, tamanho }));
        expect({ tamanho, pagina, ids: response.body.itens.map((i: { id: string }) => i.id) }).toEqual({
          tamanho,
          pagina,
          ids: esperados.map((e) => e.id),
        });
        expect(response.body.total).toBe(quantos);
      }
    }
    const longe = await ctx.api().get('/evento').query({ pagina: 900_000_000_000, tamanho: 100 }).set(ler());
    expect(longe.status).toBe(200);
    expect(longe.body.itens).toEqual([]);
  });
});

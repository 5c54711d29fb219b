import { uuidv7 } from '@hub/database';
import { auth, type Contexto, encerrarContexto, expectPagina, iniciarContexto } from '../../contexto.test-support';
import { type Cenario, criarCenario, gravarEvento } from '../eventos/linhas.test-support';

// GET /tentativa?assinatura_id= reads tentativa.assinatura_id, a copy of the delivery's subscription
// (migrations 026 and 028). Attacked here as a hostile caller (malformed, repeated, NUL, bad
// percent-encoding, a subscriber's token, every combination of filters, pages past the end) and as an
// operator (a delivery moved to another subscription, an attempt moved to another delivery): the
// list and its total must always be those counted through entrega.
let ctx: Contexto;
let a: Cenario;
let b: Cenario;
let entregasDeA: string[];
let entregasDeB: string[];
beforeAll(async () => {
  ctx = await iniciarContexto();
  a = await criarCenario(ctx);
  b = await criarCenario(ctx);
  entregasDeA = (
    await gravarEvento(ctx.hub.db, a, { recebidoEm: em(0), entregas: ['fila_de_erro', 'concluida', 'concluida'] })
  ).entregas;
  entregasDeB = (await gravarEvento(ctx.hub.db, b, { recebidoEm: em(0), entregas: ['concluida', 'concluida'] }))
    .entregas;
  let segundo = 1;
  for (const entregaId of [...entregasDeA, ...entregasDeB])
    for (const [numero, status] of [
      [1, 500],
      [2, null],
      [3, 200],
    ] as const)
      await gravar(entregaId, numero, status, segundo++);
});
afterAll(() => encerrarContexto(ctx));

function em(segundo: number) {
  return new Date(Date.UTC(2098, 4, 1, 10, 0, segundo));
}
const ler = () => auth(ctx.leitor);

/** An attempt as the worker records it: the delivery's subscription copied. */
async function gravar(entregaId: string, numero: number, statusHttp: number | null, segundo: number) {
  const { assinaturaId } = await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: entregaId } });
  const id = uuidv7();
  await ctx.hub.db.tentativa.create({
    data: {
      id,
      entregaId,
      assinaturaId,
      numero,
      iniciadaEm: em(segundo),
      duracaoMs: 10,
      statusHttp,
      sucesso: statusHttp === 200,
    },
  });
  return id;
}

type Filtro = {
  assinatura_id: string;
  entrega_id?: string;
  sucesso?: boolean;
  status_http?: number;
  desde?: Date;
  ate?: Date;
};

/** The ids the list must hold, newest first, counted through entrega as before migration 026. */
async function pelaEntrega(f: Filtro): Promise<string[]> {
  const linhas = await ctx.hub.db.$queryRaw<{ id: string }[]>`
    select t.id::text from tentativa t join entrega e on e.id = t.entrega_id
     where e.assinatura_id = ${f.assinatura_id}::uuid
       and (${f.entrega_id ?? null}::uuid is null or t.entrega_id = ${f.entrega_id ?? null}::uuid)
       and (${f.sucesso ?? null}::boolean is null or t.sucesso = ${f.sucesso ?? null}::boolean)
       and (${f.status_http ?? null}::int is null or t.status_http = ${f.status_http ?? null}::int)
       and (${f.desde ?? null}::timestamptz is null or t.iniciada_em >= ${f.desde ?? null}::timestamptz)
       and (${f.ate ?? null}::timestamptz is null or t.iniciada_em <= ${f.ate ?? null}::timestamptz)
     order by t.iniciada_em desc, t.id desc`;
  return linhas.map((l) => l.id);
}

const comoQuery = (f: Filtro) =>
  Object.fromEntries(
    Object.entries(f)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, v instanceof Date ? v.toISOString() : String(v)]),
  );

/** Every page of the list (size 2) and one past its end; each page's total; /tentativa/filtro too. */
async function conferir(f: Filtro) {
  const esperadas = await pelaEntrega(f);
  const vistas: string[] = [];
  const paginas = Math.ceil(esperadas.length / 2) + 1;
  for (let pagina = 1; pagina <= paginas; pagina++) {
    const response = await ctx
      .api()
      .get('/tentativa')
      .query({ ...comoQuery(f), pagina, tamanho: 2 })
      .set(ler());
    expect({ f, status: response.status }).toEqual({ f, status: 200 });
    expectPagina(response.body, pagina, 2);
    expect({ f, pagina, total: response.body.total }).toEqual({ f, pagina, total: esperadas.length });
    vistas.push(...response.body.itens.map((t) => t.id as string));
  }
  expect({ f, vistas }).toEqual({ f, vistas: esperadas });
  // the last page there is (pagina is clamped to 2^31 - 1): empty, with the same total
  const longe = await ctx
    .api()
    .get('/tentativa')
    .query({ ...comoQuery(f), pagina: '99999999999999999999', tamanho: 500 })
    .set(ler());
  expect({ f, status: longe.status, itens: longe.body.itens, total: longe.body.total }).toEqual({
    f,
    status: 200,
    itens: [],
    total: esperadas.length,
  });
  const filtro = await ctx.api().get('/tentativa/filtro').query(comoQuery(f)).set(ler());
  expect({ f, status: filtro.status }).toEqual({ f, status: 200 });
  expect({ f, filtro: (filtro.body as { id: string }[]).map((t) => t.id) }).toEqual({ f, filtro: esperadas });
}

/** Every combination of the other filters with the subscription's. */
function combinacoes(assinatura_id: string, entrega_id: string): Filtro[] {
  const opcoes = {
    entrega_id: [undefined, entrega_id],
    sucesso: [undefined, true, false],
    status_http: [undefined, 500],
    desde: [undefined, em(4)],
    ate: [undefined, em(12)],
  };
  let todas: Filtro[] = [{ assinatura_id }];
  for (const [campo, valores] of Object.entries(opcoes))
    todas = todas.flatMap((f) => valores.map((v) => ({ ...f, [campo]: v })));
  return todas;
}

describe('GET /tentativa?assinatura_id, as a hostile caller', () => {
  test('When assinatura_id is malformed, repeated, empty, holds NUL or bad percent-encoding, then 400 in the problem shape, never 500', async () => {
    const valido = a.assinaturaId;
    const consultas = [
      'assinatura_id=x',
      `assinatura_id=${valido}x`,
      `assinatura_id=${valido.slice(0, -1)}`,
      `assinatura_id=${valido.replaceAll('-', '')}0000`,
      'assinatura_id=',
      `assinatura_id=${valido}&assinatura_id=${b.assinaturaId}`,
      `assinatura_id=${valido}&assinatura_id=${valido}`,
      `assinatura_id=${valido}%00`,
      `assinatura_id=%00${valido}`,
      `assinatura_id=${valido}%`,
      `assinatura_id=${valido}%ZZ`,
      `assinatura_id=${valido}%C3`,
      `assinatura_id=${valido}%ED%A0%80`,
      `assinatura_id=${encodeURIComponent(`${valido}'; select 1 --`)}`,
      `assinatura_id=${valido}&sucesso=talvez`,
      `assinatura_id=${valido}&status_http=0`,
      `assinatura_id=${valido}&entrega_id=${valido}&pagina=1.5`,
      `assinatura_id=${valido}&tamanho=dez`,
    ];
    for (const rota of ['/tentativa', '/tentativa/filtro'])
      for (const consulta of consultas) {
        const response = await ctx.api().get(`${rota}?${consulta}`).set(ler());
        if (rota === '/tentativa/filtro' && /pagina|tamanho/.test(consulta)) continue; // not its parameters
        expect({ rota, consulta, status: response.status }).toEqual({ rota, consulta, status: 400 });
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(response.body).toMatchObject({ status: 400, codigo: expect.stringMatching(/^consulta_invalida$/) });
      }
  });

  test('When a subscribing application sends its token, even naming its own subscription, then 401 tipo_de_token_invalido', async () => {
    const aplicativo = await ctx.api().get(`/aplicativo/${a.assinanteId}`).set(auth(ctx.todas));
    const token = await ctx.identity.appToken(aplicativo.body.client_id as string);
    for (const assinatura of [a.assinaturaId, b.assinaturaId])
      for (const rota of ['/tentativa', '/tentativa/filtro']) {
        const response = await ctx.api().get(rota).query({ assinatura_id: assinatura }).set(auth(token));
        expect({ rota, status: response.status, codigo: response.body.codigo }).toEqual({
          rota,
          status: 401,
          codigo: 'tipo_de_token_invalido',
        });
      }
  });

  test('When assinatura_id is combined with every other filter, then each page, the page past the end and the total are those counted through entrega', async () => {
    for (const f of [
      ...combinacoes(a.assinaturaId, entregasDeA[0]!),
      // another subscription's delivery: nothing
      ...combinacoes(a.assinaturaId, entregasDeB[0]!).filter((f) => f.entrega_id && f.sucesso === undefined),
      // a subscription that does not exist, the nil and the max uuid
      { assinatura_id: uuidv7() },
      { assinatura_id: '00000000-0000-0000-0000-000000000000' },
      { assinatura_id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' },
      { assinatura_id: b.assinaturaId.toUpperCase() },
    ])
      await conferir(f);
  });
});

describe('GET /tentativa?assinatura_id, after an operator moved rows', () => {
  test('When a delivery is moved to another subscription, then its attempts are listed and counted under the new one, not the old', async () => {
    const movida = entregasDeA[1]!;
    await ctx.hub.db.$executeRaw`update entrega set assinatura_id = ${b.assinaturaId}::uuid where id = ${movida}::uuid`;
    await conferir({ assinatura_id: a.assinaturaId });
    await conferir({ assinatura_id: b.assinaturaId });
    await conferir({ assinatura_id: b.assinaturaId, sucesso: false });
  });

  test('When an attempt is moved to a delivery of another subscription, or updated to name another subscription, then it carries its delivery subscription', async () => {
    const [tentativa] = await ctx.hub.db.$queryRaw<{ id: string }[]>`
      select id::text from tentativa where entrega_id = ${entregasDeA[2]!}::uuid and numero = 3`;
    await ctx.hub.db.$executeRaw`
      update tentativa set entrega_id = ${entregasDeB[1]!}::uuid, numero = 4 where id = ${tentativa!.id}::uuid`;
    await conferir({ assinatura_id: a.assinaturaId });
    await conferir({ assinatura_id: b.assinaturaId });
    await ctx.hub.db.$executeRaw`
      update tentativa set assinatura_id = ${a.assinaturaId}::uuid where id = ${tentativa!.id}::uuid`;
    await conferir({ assinatura_id: a.assinaturaId });
    await conferir({ assinatura_id: b.assinaturaId, status_http: 200 });
  });

  test('When retention deletes the events, then the subscription lists nothing and counts 0', async () => {
    await ctx.hub.db.$executeRaw`
      delete from evento where id in (select evento_id from entrega where id = any(${[...entregasDeA, ...entregasDeB]}::uuid[]))`;
    await conferir({ assinatura_id: a.assinaturaId });
    await conferir({ assinatura_id: b.assinaturaId });
  });
});

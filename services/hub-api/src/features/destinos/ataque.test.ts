import { uuidv7 } from '@hub/database';
import {
  auth,
  type Contexto,
  criarAplicativo,
  criarTipo,
  criarVersao,
  encerrarContexto,
  iniciarContexto,
} from '../../contexto.test-support';

/**
 * Issue 24's operator routes attacked: a subscribing application's token, users without the
 * permission, odd ids, and operators racing each other on one destination. Every refusal is the
 * problem shape and changes nothing; no race answers 500 or leaves the row or its history torn.
 */
let ctx: Contexto;
let id: string;
let clientId: string;
const ORIGEM = 'https://ataque.example';

beforeAll(async () => {
  ctx = await iniciarContexto();
  const assinante = await criarAplicativo(ctx, 'Assinante do ataque');
  clientId = assinante.client_id as string;
  const tipo = await criarTipo(ctx);
  await criarVersao(ctx, tipo.id);
  const r = await ctx
    .api()
    .post('/assinatura')
    .set(auth(ctx.todas))
    .send({
      aplicativo_assinante_id: assinante.id,
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      url_de_destino: `${ORIGEM}/hooks`,
    });
  expect(r.status).toBe(201);
  id = (await ctx.hub.db.destino.findUniqueOrThrow({ where: { origem: ORIGEM } })).id;
});
afterAll(() => encerrarContexto(ctx));

async function abrir() {
  const em = new Date();
  await ctx.hub.db.destino.update({
    where: { id },
    data: {
      circuito: 'aberto',
      circuitoDesde: em,
      circuitoAberturas: 3,
      circuitoAbertoAte: new Date(Date.now() + 60_000),
    },
  });
}
const linha = () => ctx.hub.db.destino.findUniqueOrThrow({ where: { id } });
const semHoras = ({ atualizadoEm: _a, ...resto }: Awaited<ReturnType<typeof linha>>) => resto;

const ROTAS = (alvo: string) =>
  [
    ['get', '/destino', undefined],
    ['get', `/destino/${alvo}`, undefined],
    ['patch', `/destino/${alvo}`, { concorrencia_maxima: 1 }],
    ['post', `/destino/${alvo}/pausar`, undefined],
    ['post', `/destino/${alvo}/retomar`, undefined],
    ['post', `/destino/${alvo}/fechar-circuito`, undefined],
  ] as const;

function enviar(metodo: 'get' | 'patch' | 'post', caminho: string, corpo: object | undefined, token?: string) {
  const r = ctx.api()[metodo](caminho);
  if (token) r.set(auth(token));
  return corpo ? r.send(corpo) : r;
}

test("When a subscribing application's token (one that delivers to this origin) calls every destination route, then 401 problem+json and nothing changes", async () => {
  await abrir();
  const antes = semHoras(await linha());
  const token = await ctx.identity.appToken(clientId);
  for (const [metodo, caminho, corpo] of ROTAS(id)) {
    const r = await enviar(metodo, caminho, corpo, token);
    expect([caminho, r.status, r.headers['content-type']]).toEqual([
      caminho,
      401,
      expect.stringMatching(/^application\/problem\+json/),
    ]);
    expect(JSON.stringify(r.body)).not.toContain(ORIGEM);
  }
  expect(semHoras(await linha())).toEqual(antes);
});

test('When a user without monitoramento, or a reader, changes a destination, then 403 problem+json and nothing changes', async () => {
  await abrir();
  const antes = semHoras(await linha());
  for (const token of [ctx.semMonitoramento, ctx.leitor])
    for (const [metodo, caminho, corpo] of ROTAS(id)) {
      const r = await enviar(metodo, caminho, corpo, token);
      if (token === ctx.leitor && metodo === 'get') {
        expect(r.status).toBe(200);
        continue;
      }
      expect([caminho, r.status, r.body.status]).toEqual([caminho, 403, 403]);
    }
  expect(semHoras(await linha())).toEqual(antes);
});

test.each([
  ['the nil uuid', 404, '00000000-0000-0000-0000-000000000000'],
  ['an unknown uuid in capitals', 404, () => uuidv7().toUpperCase()],
  ['a uuid with a NUL after it', 400, () => `${uuidv7()}%00`],
  ['a uuid and a path after it', 404, () => `${uuidv7()}%2F..%2F`],
  ['not a uuid', 404, "1' or '1'='1"],
  ['invalid UTF-8', 400, '%ED%A0%80'],
] as const)('When a destination route gets %s for an id, then %i problem+json', async (_nome, status, alvo) => {
  const valor = typeof alvo === 'function' ? alvo() : alvo;
  for (const [metodo, caminho, corpo] of ROTAS(valor).slice(1)) {
    const r = await enviar(metodo, caminho, corpo, ctx.todas);
    expect([caminho, r.status, r.headers['content-type']]).toEqual([
      caminho,
      status,
      expect.stringMatching(/^application\/problem\+json/),
    ]);
  }
});

test('When operators close, pause, resume and change one open destination at the same time, then every call answers 200, the circuit is closed once with one line of history, and the row ends consistent', async () => {
  await abrir();
  const linhasAntes = await ctx.hub.db.destinoCircuito.count({ where: { destinoId: id } });
  const chamadas = Array.from({ length: 40 }, (_, i) => {
    const [metodo, caminho, corpo] = [
      ['post', `/destino/${id}/fechar-circuito`, undefined],
      ['post', `/destino/${id}/pausar`, undefined],
      ['post', `/destino/${id}/retomar`, undefined],
      ['patch', `/destino/${id}`, { concorrencia_maxima: (i % 7) + 1, limite_por_segundo: i % 2 ? null : i + 1 }],
    ][i % 4] as ['get' | 'patch' | 'post', string, object | undefined];
    return enviar(metodo, caminho, corpo, ctx.todas);
  });
  const respostas = await Promise.all(chamadas);
  expect(respostas.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
  const depois = await linha();
  expect(depois).toMatchObject({
    circuito: 'fechado',
    circuitoAberturas: 0,
    circuitoAbertoAte: null,
    circuitoSonda: null,
  });
  const novas = await ctx.hub.db.destinoCircuito.findMany({ where: { destinoId: id }, orderBy: { em: 'desc' } });
  expect(novas.length - linhasAntes).toBe(1);
  expect(novas[0]).toMatchObject({ de: 'aberto', para: 'fechado', motivo: 'manual' });
  // Whatever order they ran in, the last answer of each route agrees with the row.
  const ultimo = await ctx.api().get(`/destino/${id}`).set(auth(ctx.leitor));
  expect(ultimo.body).toMatchObject({
    pausado: depois.pausado,
    concorrencia_maxima: depois.concorrenciaMaxima,
    limite_por_segundo: depois.limitePorSegundo,
    circuito: { situacao: 'fechado' },
  });
});

test('When a limit is the largest allowed or one past it, then it is taken or refused with 422 and nothing changes', async () => {
  const ok = await enviar(
    'patch',
    `/destino/${id}`,
    { concorrencia_maxima: 1000, limite_por_segundo: 100_000 },
    ctx.todas,
  );
  expect(ok.status).toBe(200);
  const antes = semHoras(await linha());
  for (const corpo of [
    { concorrencia_maxima: 1001 },
    { limite_por_segundo: 100_001 },
    { concorrencia_maxima: 0 },
    { limite_por_segundo: 0 },
    { concorrencia_maxima: 1.5 },
    { concorrencia_maxima: '10' },
    { pausado: false },
    { circuito: 'fechado' },
    { isolamento: null },
  ]) {
    const r = await enviar('patch', `/destino/${id}`, corpo, ctx.todas);
    expect([corpo, r.status, r.body.status]).toEqual([corpo, 422, 422]);
  }
  expect(semHoras(await linha())).toEqual(antes);
});

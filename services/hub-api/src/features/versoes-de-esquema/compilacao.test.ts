import { uuidv7 } from '@hub/database';
import { waitFor } from '@hub/testing';
import { auth, type Contexto, encerrarContexto, iniciarContexto, criarTipo } from '../../contexto.test-support';
import { cenario, publicar } from '../publicacao/cenario.test-support';

/**
 * ajv compiles only in worker threads (docs/decisions/schema-compilation-off-the-event-loop.md): a
 * schema that takes long to compile (10,000 patternProperties: 21 s when it was compiled on the event
 * loop) holds no other request, whether it is being registered or used for the first time by this
 * process, and past HUB_SCHEMA_COMPILE_LIMIT it is refused naming the limit.
 */
let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto({ env: { HUB_SCHEMA_COMPILE_LIMIT: '3s' } });
}, 60_000);
afterAll(() => encerrarContexto(ctx));

const PADROES = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`${i}`, { type: 'integer' }]));
const LENTO = { type: 'object', patternProperties: PADROES };
const NOMEIA_O_LIMITE = expect.stringContaining('takes more than 3000 ms to compile (HUB_SCHEMA_COMPILE_LIMIT)');

/** Resolves once a compilation runs in a worker: the slow request is past every check before it. */
const compilando = () =>
  waitFor(() => ctx.hub.validador.compilador.emAndamento > 0 || undefined, { what: 'a compilation under way' });

test('When a 10,000-patternProperties schema is being registered, then a publication and a health check sent meanwhile are answered before it, and it is refused naming the limit', async () => {
  const c = await cenario(ctx);
  const tipo = await criarTipo(ctx);
  const ordem: string[] = [];
  const registro = ctx
    .api()
    .post('/versao-de-esquema')
    .set(auth(ctx.todas))
    .send({ tipo_de_evento_id: tipo.id, esquema: LENTO })
    .then((r) => {
      ordem.push('registro');
      return r;
    });
  await compilando();
  const publicacao = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'durante' }));
  ordem.push('publicacao');
  const saude = await ctx.api().get('/saude');
  ordem.push('saude');
  const resposta = await registro;
  expect(ordem).toEqual(['publicacao', 'saude', 'registro']);
  expect([publicacao.status, saude.status]).toEqual([201, 200]);
  expect(resposta.status).toBe(422);
  expect(resposta.body).toMatchObject({ codigo: 'esquema_invalido' });
  expect(resposta.body.erros).toEqual([{ caminho: '/esquema', mensagem: NOMEIA_O_LIMITE }]);
  const versoes = await ctx.api().get('/versao-de-esquema').query({ tipo_de_evento_id: tipo.id }).set(auth(ctx.leitor));
  expect(versoes.body.total).toBe(0);
}, 120_000);

test('When a version stored before this process ran (no limit then) is first published, then its compilation holds no other publication, and past the limit the version is refused naming it', async () => {
  const c = await cenario(ctx);
  // Version 2 of the type, written as an older hub would have: never compiled by this process.
  const agora = new Date();
  await ctx.hub.db.versaoDeEsquema.create({
    data: {
      id: uuidv7(),
      tipoDeEventoId: c.tipo.id,
      versao: 2,
      esquema: LENTO,
      ativa: true,
      criadoEm: agora,
      atualizadoEm: agora,
    },
  });
  const ordem: string[] = [];
  const primeiroUso = publicar(ctx, c.tokenDoDono, c.corpo({ versao_do_esquema: 2, dados: { 1: 1 } })).then((r) => {
    ordem.push('versao 2');
    return r;
  });
  await compilando();
  const outra = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'durante' }));
  ordem.push('versao 1');
  const recusa = await primeiroUso;
  expect(ordem).toEqual(['versao 1', 'versao 2']);
  expect(outra.status).toBe(201);
  expect([recusa.status, recusa.body.codigo]).toEqual([422, 'esquema_invalido']);
  expect(recusa.body.erros).toEqual([{ caminho: '/versao_do_esquema', mensagem: NOMEIA_O_LIMITE }]);
  // Refused at once for a while after (no worker held again for the same answer).
  const denovo = await publicar(ctx, c.tokenDoDono, c.corpo({ versao_do_esquema: 2, dados: { 1: 1 } }));
  expect([denovo.status, denovo.body.codigo, ctx.hub.validador.compilador.emAndamento]).toEqual([
    422,
    'esquema_invalido',
    0,
  ]);
}, 120_000);

test('When more slow schemas are being checked than there are workers, then the first publication of a version this process has not compiled yet is answered before them', async () => {
  const c = await cenario(ctx);
  // Version 2, stored by another replica (or before a restart): compiled on its first publication here.
  const agora = new Date();
  await ctx.hub.db.versaoDeEsquema.create({
    data: {
      id: uuidv7(),
      tipoDeEventoId: c.tipo.id,
      versao: 2,
      esquema: { type: 'object' },
      ativa: true,
      criadoEm: agora,
      atualizadoEm: agora,
    },
  });
  const ordem: string[] = [];
  // Checks store nothing and may be sent again and again: four of them, each 3 s in a worker. Before,
  // they took both workers and the publication waited behind two of them (two rounds of the limit).
  const lentos = Array.from({ length: 4 }, () =>
    ctx
      .api()
      .post('/versao-de-esquema/verificar-compatibilidade')
      .set(auth(ctx.todas))
      .send({ tipo_de_evento_id: c.tipo.id, esquema: LENTO })
      .then((r) => {
        ordem.push('registro');
        return r.status;
      }),
  );
  await compilando();
  const primeiroUso = await publicar(ctx, c.tokenDoDono, c.corpo({ versao_do_esquema: 2, dados: {} }));
  ordem.push('publicacao');
  expect(primeiroUso.status).toBe(201);
  expect(await Promise.all(lentos)).toEqual([422, 422, 422, 422]);
  // Before the second of them at the latest (the first may end while the publication's worker starts:
  // ~1.5 s on a loaded machine); before, after all four.
  expect(ordem.indexOf('publicacao')).toBeLessThanOrEqual(1);
}, 120_000);

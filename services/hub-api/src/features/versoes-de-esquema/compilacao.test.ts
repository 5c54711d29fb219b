import { auth, type Contexto, encerrarContexto, iniciarContexto, criarTipo } from '../../contexto.test-support';
import { cenario, publicar } from '../publicacao/cenario.test-support';

/**
 * A schema that takes long to compile (10,000 patternProperties: about 21 s on the event loop before
 * compilation moved to a worker thread) is compiled in its worker under HUB_SCHEMA_COMPILE_LIMIT and
 * refused past it, while the hub goes on answering publications.
 */
let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto({ env: { HUB_SCHEMA_COMPILE_LIMIT: '3s' } });
}, 60_000);
afterAll(() => encerrarContexto(ctx));

const PADROES = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`${i}`, { type: 'integer' }]));
const LENTO = { type: 'object', patternProperties: PADROES };

test('When a 10,000-patternProperties schema is registered while publications go on, then every publication is answered during the registration and the schema is refused naming the limit', async () => {
  const c = await cenario(ctx);
  const tipo = await criarTipo(ctx);
  let respondido = false;
  const registro = ctx
    .api()
    .post('/versao-de-esquema')
    .set(auth(ctx.todas))
    .send({ tipo_de_evento_id: tipo.id, esquema: LENTO })
    .then((r) => {
      respondido = true;
      return r;
    });
  const durante: number[] = [];
  // Bounded: at most 200 publications, one after another, until the registration is answered.
  for (let i = 0; i < 200 && !respondido; i += 1) {
    const resposta = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: `durante-${i}` }));
    if (!respondido) durante.push(resposta.status);
  }
  const resposta = await registro;
  expect(resposta.status).toBe(422);
  expect(resposta.body).toMatchObject({ codigo: 'esquema_invalido' });
  expect(resposta.body.erros).toEqual([
    {
      caminho: '/esquema',
      mensagem: expect.stringContaining('takes more than 3000 ms to compile (HUB_SCHEMA_COMPILE_LIMIT)'),
    },
  ]);
  // Publications were answered while the registration was still running, and every one was accepted.
  expect(durante.length).toBeGreaterThanOrEqual(3);
  expect(new Set(durante)).toEqual(new Set([201]));
  const versoes = await ctx.api().get('/versao-de-esquema').query({ tipo_de_evento_id: tipo.id }).set(auth(ctx.leitor));
  expect(versoes.body.total).toBe(0);
}, 120_000);

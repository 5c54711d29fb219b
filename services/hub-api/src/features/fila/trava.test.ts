import { QUEUES } from '@hub/contracts';
import { waitFor } from '@hub/testing';
import pg from 'pg';
import request from 'supertest';
import { auth } from '../../contexto.test-support';
import { startHubApiForTests, type TestHubApi } from '../../hub-api.test-support';
import { type Cenario, criarCenario, gravarEvento } from '../eventos/linhas.test-support';
import {
  type ContextoComFila,
  envenenar,
  idsNaFila,
  iniciarContextoComFila,
  porNaFilaDeErro,
  travasTomadas,
  verificarConcordancia,
} from './fila-de-erro.test-support';
import { travaDaFilaDeErro } from './trava';

// A virtual host and database of this file's own: the passes here see only this file's messages.
let ctx: ContextoComFila;
let cenario: Cenario;
let admin: pg.Client;
beforeAll(async () => {
  ctx = await iniciarContextoComFila();
  cenario = await criarCenario(ctx);
  admin = new pg.Client({ connectionString: ctx.hub.databaseUrl });
  await admin.connect();
}, 60_000);
afterAll(async () => {
  await admin?.end();
  await ctx?.encerrar();
});

/** A pass asked by HTTP, already sent (a supertest request leaves only once awaited or then-ed). */
const conciliar = () =>
  ctx
    .api()
    .post('/fila/erro/conciliar')
    .set(auth(ctx.todas))
    .then((r) => r);
const olhar = () => ctx.api().get(`/fila/${QUEUES.entregasErro}/mensagens?limite=100`).set(auth(ctx.leitor));

/** The hub's database sessions of the error queue's locks, and those waiting on a row lock in an UPDATE of entrega. */
const sessoes = async (sql: string) => (await admin.query<{ pid: number }>(sql)).rows.map((r) => r.pid);
const sessoesDaTrava = () =>
  sessoes(`select pid from pg_stat_activity
            where datname = current_database() and application_name = 'hub-api.fila-de-erro'`);
const updatesEsperando = () =>
  sessoes(`select pid from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query ilike '%update entrega%'`);

/**
 * Deliveries in fila_de_erro with their messages, and one delivery stuck em_andamento whose job was
 * dead-lettered as poison (its row stood still for hours: the pass marks it fila_de_erro).
 */
async function cenarioComEnvenenada(): Promise<{ naFila: string[]; envenenada: string }> {
  const { entregas } = await gravarEvento(ctx.hub.db, cenario, {
    recebidoEm: new Date(Date.now() - 7_200_000),
    entregas: ['pendente', 'pendente', 'em_andamento'],
  });
  const [a, b, envenenada] = entregas as [string, string, string];
  await porNaFilaDeErro(ctx.hub, [a, b]);
  await envenenar(ctx.hub, envenenada);
  return { naFila: [a, b], envenenada };
}

/**
 * The error queue's message ids once they include `ids`: a read that met the messages held for a
 * moment by another reader counted none of them (seen once in CI, on a loaded machine).
 */
async function filaComOCenario(ids: string[]): Promise<string[]> {
  return waitFor(
    async () => {
      const naFila = await idsNaFila(ctx.hub);
      return ids.every((id) => naFila.includes(id)) ? naFila : undefined;
    },
    { what: "the scenario's messages in the error queue" },
  );
}

/**
 * Holds the row of a delivery in a transaction of the test's own, so that a pass that marks it
 * waits half-way (messages read, nothing settled) until the test lets go: commit or rollback.
 */
async function segurarLinha(id: string) {
  const cliente = new pg.Client({ connectionString: ctx.hub.databaseUrl });
  await cliente.connect();
  await cliente.query('begin');
  await cliente.query('select 1 from entrega where id = $1 for update', [id]);
  const soltar = async () => {
    seguradas.delete(soltar);
    await cliente.query('commit').catch(() => undefined);
    await cliente.end().catch(() => undefined);
  };
  seguradas.add(soltar);
  return { soltar };
}
/** Rows still held when a test fails: let go, or the hub's stop would wait on its pass for ever. */
const seguradas = new Set<() => Promise<void>>();
afterEach(async () => {
  for (const soltar of [...seguradas]) await soltar();
});

/** Starts a pass by HTTP and waits until it stands in its mark of the poison job, half-way through. */
async function passeParadoNaMarca() {
  const resposta = conciliar();
  await waitFor(async () => (await updatesEsperando()).length === 1, { what: 'the pass waiting on the held row' });
  expect(await travasTomadas(ctx.hub.db)).toEqual(['passe:ExclusiveLock', 'leitura:ExclusiveLock']);
  // Wrapped: an async function returning the promise itself would wait for the answer.
  return { resposta };
}

const semTravas = () =>
  waitFor(async () => (await travasTomadas(ctx.hub.db)).length === 0 && (await sessoesDaTrava()).length === 0, {
    what: "the error queue's locks released and their session closed",
  });

test('When a reconciliation waits for a look under way, then a new look and a pass asked of another hub-api answer 409 conciliacao_em_andamento with Retry-After, and the pass runs once the look ends and releases its locks', async () => {
  const { naFila } = await cenarioComEnvenenada();
  // A look under way (as another hub-api's would be): the test holds the readers' lock shared.
  const olhada = await travaDaFilaDeErro(ctx.hub.databaseUrl).paraOlhar();
  // Looks do not exclude one another.
  expect((await olhar()).status).toBe(200);

  const resposta = conciliar();
  await waitFor(async () => (await travasTomadas(ctx.hub.db)).includes('passe:ExclusiveLock'), {
    what: 'the pass holding its lock, waiting for the look',
  });

  const recusada = await olhar();
  expect({ status: recusada.status, retryAfter: recusada.headers['retry-after'] }).toEqual({
    status: 409,
    retryAfter: '10',
  });
  expect(recusada.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(recusada.body).toMatchObject({
    type: 'urn:event-hub:problema:conciliacao_em_andamento',
    status: 409,
    codigo: 'conciliacao_em_andamento',
    detail: expect.any(String),
  });

  // Another replica on the same database and broker does not wait a whole pass: it refuses at once.
  let outro: TestHubApi | undefined;
  try {
    outro = await startHubApiForTests(ctx.identity, ctx.access, {
      databaseUrl: ctx.hub.databaseUrl,
      env: { RABBITMQ_URL: ctx.rabbitmqUrl },
    });
    const recusadaNoOutro = await request(outro.url).post('/fila/erro/conciliar').set(auth(ctx.todas));
    expect({
      status: recusadaNoOutro.status,
      codigo: recusadaNoOutro.body.codigo,
      retryAfter: recusadaNoOutro.headers['retry-after'],
    }).toEqual({ status: 409, codigo: 'conciliacao_em_andamento', retryAfter: '10' });
  } finally {
    await outro?.close();
  }

  await olhada.soltar();
  const feita = await resposta;
  expect(feita.status).toBe(200);
  expect(feita.body).toMatchObject({ entregas_marcadas_fila_de_erro: 1, mensagens_mantidas: 3 });
  await semTravas();
  expect((await olhar()).status).toBe(200);
  expect(await verificarConcordancia(ctx.hub)).toMatchObject({ concordam: true });
  expect(await idsNaFila(ctx.hub)).toEqual(expect.arrayContaining(naFila));
});

test('When a pass fails half-way (its mark of a poison job is cancelled), then it answers 500, releases its locks and loses nothing: the next pass makes the queue agree', async () => {
  const { naFila, envenenada } = await cenarioComEnvenenada();
  const antes = await filaComOCenario([...naFila, envenenada]);
  const linha = await segurarLinha(envenenada);
  const { resposta } = await passeParadoNaMarca();
  // Half-way, a look is refused rather than kept waiting.
  expect((await olhar()).body).toMatchObject({ status: 409, codigo: 'conciliacao_em_andamento' });

  const [update] = await updatesEsperando();
  await admin.query('select pg_cancel_backend($1)', [update]);
  const falhou = await resposta;
  await linha.soltar();
  expect(falhou.body).toMatchObject({ status: 500, codigo: 'erro_interno' });
  await semTravas();

  // The batch was never settled: every message is back, once.
  expect(await idsNaFila(ctx.hub)).toEqual(antes);
  expect((await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: envenenada } })).situacao).toBe('em_andamento');
  const depois = await conciliar();
  expect(depois.body).toMatchObject({ entregas_marcadas_fila_de_erro: 1, removidas_duplicadas: 0 });
  expect(await verificarConcordancia(ctx.hub)).toMatchObject({ concordam: true });
  expect(await idsNaFila(ctx.hub)).toEqual(expect.arrayContaining([...naFila, envenenada]));
});

test("When the pass's lock session is killed half-way (pg_terminate_backend), then the pass stops before settling anything, answers 503, and nothing is lost: the next pass makes the queue agree", async () => {
  const { naFila, envenenada } = await cenarioComEnvenenada();
  const antes = await filaComOCenario([...naFila, envenenada]);
  const linha = await segurarLinha(envenenada);
  const { resposta } = await passeParadoNaMarca();
  const [sessao] = await sessoesDaTrava();
  expect((await admin.query('select pg_terminate_backend($1, 10000) as ok', [sessao])).rows[0].ok).toBe(true);
  // The database let the locks go with the session.
  expect(await travasTomadas(ctx.hub.db)).toEqual([]);

  // Let the mark through: it commits, then the pass finds its lock gone and stops before the broker.
  await linha.soltar();
  const parou = await resposta;
  expect({ status: parou.status, codigo: parou.body.codigo, retryAfter: parou.headers['retry-after'] }).toEqual({
    status: 503,
    codigo: 'banco_indisponivel',
    retryAfter: '5',
  });
  await semTravas();

  // Nothing settled: every message is back, once; the mark stays (the next pass keeps its message).
  expect(await idsNaFila(ctx.hub)).toEqual(antes);
  expect((await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: envenenada } })).situacao).toBe('fila_de_erro');
  const depois = await conciliar();
  expect(depois.status).toBe(200);
  expect(depois.body).toMatchObject({
    entregas_marcadas_fila_de_erro: 0,
    removidas_duplicadas: 0,
    entregas_republicadas: 0,
  });
  expect(await verificarConcordancia(ctx.hub)).toMatchObject({ concordam: true });
  expect(await idsNaFila(ctx.hub)).toEqual(expect.arrayContaining([...naFila, envenenada]));
  await semTravas();
});

import { createLogger } from '@hub/log';
import { uniqueName, waitFor } from '@hub/testing';
import { hubApiConfig } from '../../config';
import { type RunningHubApi, startHubApi } from '../../start';
import { auth } from '../../contexto.test-support';
import { criarCenario, gravarEvento } from '../eventos/linhas.test-support';
import {
  type ContextoComFila,
  idsNaFila,
  idsNaFilaDeTrabalho,
  iniciarContextoComFila,
  jobsNaOutbox,
  porNaFilaDeErro,
  verificarConcordancia,
} from '../fila/fila-de-erro.test-support';

const TOTAL = 240;

let ctx: ContextoComFila;
const outros: RunningHubApi[] = [];
beforeAll(async () => {
  // Small batches with a pause between them, so the request is surely half-way when the hub stops.
  ctx = await iniciarContextoComFila({ HUB_REPROCESSAMENTO_LOTE: '5', HUB_REPROCESSAMENTO_PAUSA: '100ms' });
}, 60_000);
afterAll(async () => {
  for (const hub of outros) await hub.stop();
  await ctx?.encerrar();
});

/** Another hub-api process on the same database and virtual host (two replicas after a restart). */
function outroHub(): Promise<RunningHubApi> {
  const config = hubApiConfig.parse({
    ...ctx.identity.env,
    HUB_DATABASE_URL: ctx.hub.databaseUrl,
    ACCESS_URL: ctx.access.url,
    RABBITMQ_URL: ctx.rabbitmqUrl,
    HUB_SIGNING_KEYS_FILE: ctx.hub.keysFile,
    HUB_SIGNING_KEYS_RELOAD: '0ms',
    HUB_REPROCESSAMENTO_LOTE: '7',
  });
  return startHubApi(config, createLogger('hub-api'), {
    eventosDaPlataformaQueue: uniqueName('hub-api.eventos-da-plataforma'),
    port: 0,
  });
}

test('When hub-api stops half-way through a reprocessing, then the two instances started after it finish it, every delivery reprocessed exactly once', async () => {
  const cenario = await criarCenario(ctx);
  const ids: string[] = [];
  for (let i = 0; i < TOTAL / 40; i++) {
    const evento = await gravarEvento(ctx.hub.db, cenario, {
      recebidoEm: new Date(Date.UTC(2022, 0, 1, 0, 0, i)),
      entregas: Array.from({ length: 40 }, () => 'pendente' as const),
    });
    ids.push(...evento.entregas);
  }
  await porNaFilaDeErro(ctx.hub, ids, 4);
  ids.sort();

  const response = await ctx.api().post('/reprocessamento').set(auth(ctx.todas)).send({});
  expect(response.body).toMatchObject({ situacao: 'pendente', quantidade_de_entregas: TOTAL });
  const id = response.body.id as string;
  const lida = () => ctx.hub.db.solicitacaoDeReprocessamento.findUniqueOrThrow({ where: { id } });
  await waitFor(async () => (await lida()).reprocessadas >= 20, { what: 'a few batches' });

  await ctx.hub.stop();
  const parada = await lida();
  expect(parada.situacao).toBe('em_andamento');
  expect(parada.reprocessadas).toBeGreaterThan(0);
  expect(parada.reprocessadas).toBeLessThan(TOTAL);
  // What the request says it did is exactly what the deliveries show: batch and progress commit together.
  expect(await ctx.hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'pendente' } })).toBe(
    parada.reprocessadas,
  );

  outros.push(await outroHub(), await outroHub());
  const [b] = outros as [RunningHubApi, RunningHubApi];
  const fim = await waitFor(
    async () => {
      const s = await b.db.solicitacaoDeReprocessamento.findUniqueOrThrow({ where: { id } });
      return s.situacao === 'concluida' ? s : undefined;
    },
    { what: 'the request to conclude on the new instances', timeoutMs: 30_000 },
  );
  expect({ reprocessadas: fim.reprocessadas, ignoradas: fim.ignoradas }).toEqual({
    reprocessadas: TOTAL,
    ignoradas: 0,
  });

  const entregas = await b.db.entrega.findMany({ where: { id: { in: ids } } });
  expect(entregas.every((e) => e.situacao === 'pendente' && e.tentativasNoCicloAtual === 0)).toBe(true);
  expect(entregas.every((e) => e.quantidadeDeTentativas === 4)).toBe(true);
  const jobs = await jobsNaOutbox(b.db, ids);
  expect([...jobs.values()].filter((n) => n !== 1)).toEqual([]);
  expect(jobs.size).toBe(TOTAL);

  // Each job reached the work queue once (the relays publish what the stopped instance left too).
  await waitFor(async () => (await b.db.outbox.count({ where: { publicadoEm: null } })) === 0, {
    what: 'the outbox to be published',
    timeoutMs: 20_000,
  });
  expect(await idsNaFilaDeTrabalho(b)).toEqual(ids);
  // And the error queue was emptied of them by the reconciliation that follows a request.
  const filaDeB = { db: b.db, broker: b.broker, databaseUrl: ctx.hub.databaseUrl };
  await waitFor(async () => (await idsNaFila(filaDeB)).length === 0, { what: 'the error queue to empty' });
  expect(await verificarConcordancia(filaDeB)).toMatchObject({
    concordam: true,
    mensagens: 0,
    entregas_na_fila_de_erro: 0,
  });
});

import { EXCHANGES } from '@hub/contracts';
import { auth } from '../../contexto.test-support';
import { criarCenario, gravarEvento, type Cenario } from '../eventos/linhas.test-support';
import { trabalhosDasEntregas } from '../entregas/trabalho';
import {
  type ContextoComFila,
  envenenar,
  idsNaFila,
  iniciarContextoComFila,
  mensagensComCabecalhos,
  porNaFilaDeErro,
  verificarConcordancia,
} from './fila-de-erro.test-support';

let ctx: ContextoComFila;
let cenario: Cenario;
beforeAll(async () => {
  ctx = await iniciarContextoComFila();
  cenario = await criarCenario(ctx);
}, 60_000);
afterAll(() => ctx?.encerrar());

const conciliar = () => ctx.api().post('/fila/erro/conciliar').set(auth(ctx.todas));

const mensagens = () => mensagensComCabecalhos(ctx.hub);

test('When the reconciliation is asked without monitoramento.editar, then 403', async () => {
  const response = await ctx.api().post('/fila/erro/conciliar').set(auth(ctx.leitor));
  expect({ status: response.status, codigo: response.body.codigo }).toEqual({ status: 403, codigo: 'sem_permissao' });
});

test('When the error queue and fila_de_erro disagree in every way, then one pass removes, republishes and marks until they agree one to one, and a second pass changes nothing', async () => {
  const ha = (ms: number) => new Date(Date.now() - ms);
  const evento = await gravarEvento(ctx.hub.db, cenario, {
    recebidoEm: ha(7_200_000),
    entregas: ['pendente', 'pendente', 'concluida', 'pendente', 'em_andamento', 'em_andamento'],
  });
  const [mantida, semMensagem, concluida, apagada, parada, recente] = evento.entregas as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  // In fila_de_erro with two messages (the worker published twice), and without any.
  await porNaFilaDeErro(ctx.hub, [mantida]);
  await porNaFilaDeErro(ctx.hub, [mantida]);
  await ctx.hub.db.entrega.update({
    where: { id: semMensagem },
    data: { situacao: 'fila_de_erro', ultimoErro: 'HTTP 502' },
  });
  // Messages whose delivery is concluded, and whose delivery retention erased.
  const [jobConcluida] = (await trabalhosDasEntregas(ctx.hub.db, [concluida])).values();
  await ctx.hub.broker.publish(EXCHANGES.entregasErro, '', Buffer.from(JSON.stringify(jobConcluida)));
  await porNaFilaDeErro(ctx.hub, [apagada]);
  const outroEvento = await gravarEvento(ctx.hub.db, cenario, { recebidoEm: ha(7_200_000), entregas: ['pendente'] });
  await porNaFilaDeErro(ctx.hub, outroEvento.entregas);
  await ctx.hub.db.evento.delete({ where: { id: outroEvento.id } });
  // Poison jobs: one whose delivery stood still for an hour, one whose delivery moved 10 s ago.
  await ctx.hub.db.entrega.update({ where: { id: parada }, data: { atualizadaEm: ha(3_600_000) } });
  await ctx.hub.db.entrega.update({ where: { id: recente }, data: { atualizadaEm: ha(10_000) } });
  await envenenar(ctx.hub, parada);
  await envenenar(ctx.hub, recente);
  // The delivery `apagada` was reprocessed meanwhile (its row says pendente again).
  await ctx.hub.db.entrega.update({ where: { id: apagada }, data: { situacao: 'pendente', atualizadaEm: new Date() } });

  const primeira = await conciliar();
  expect(primeira.status).toBe(200);
  expect(primeira.body).toMatchObject({
    mensagens_examinadas: 7,
    mensagens_mantidas: 2,
    removidas_sem_entrega: 1,
    removidas_fora_da_fila_de_erro: 2,
    removidas_duplicadas: 1,
    entregas_marcadas_fila_de_erro: 1,
    mensagens_em_espera: 1,
    mensagens_ilegiveis: 0,
    entregas_republicadas: 1,
  });
  const marcada = await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: parada } });
  expect(marcada.situacao).toBe('fila_de_erro');
  expect(marcada.ultimoErro).toContain('poison');
  expect((await ctx.hub.db.entrega.findUniqueOrThrow({ where: { id: recente } })).situacao).toBe('em_andamento');

  const depois = await mensagens();
  expect(depois.map((m) => m.id).sort()).toEqual([mantida, semMensagem, parada, recente].sort());
  // What was kept keeps its headers; what was missing is rebuilt from the row.
  expect(depois.find((m) => m.id === mantida)!.headers).toMatchObject({
    'hub-motivo': 'tentativas_esgotadas',
    'hub-tentativas': 3,
  });
  expect(depois.find((m) => m.id === semMensagem)!.headers).toMatchObject({
    'hub-motivo': 'conciliacao',
    'hub-ultimo-erro': 'HTTP 502',
  });
  expect(await verificarConcordancia(ctx.hub)).toMatchObject({
    concordam: false,
    sobrando: [recente],
    faltando: [],
    duplicadas: [],
  });

  // Once the recent one has stood still long enough, it is marked too and both sides agree.
  await ctx.hub.db.entrega.update({ where: { id: recente }, data: { atualizadaEm: ha(3_600_000) } });
  const segunda = await conciliar();
  expect(segunda.body).toMatchObject({
    mensagens_examinadas: 4,
    mensagens_mantidas: 4,
    entregas_marcadas_fila_de_erro: 1,
  });
  const terceira = await conciliar();
  expect(terceira.body).toMatchObject({
    mensagens_examinadas: 4,
    mensagens_mantidas: 4,
    removidas_sem_entrega: 0,
    removidas_fora_da_fila_de_erro: 0,
    removidas_duplicadas: 0,
    entregas_marcadas_fila_de_erro: 0,
    mensagens_em_espera: 0,
    entregas_republicadas: 0,
  });
  expect(await verificarConcordancia(ctx.hub)).toMatchObject({
    concordam: true,
    entregas_na_fila_de_erro: 4,
    mensagens: 4,
  });
});

test('When a message is not a delivery job, then it is kept for an operator and the check says they disagree', async () => {
  await ctx.hub.broker.publish(EXCHANGES.entregasErro, '', Buffer.from('not a job'));
  const response = await conciliar();
  expect(response.body).toMatchObject({ mensagens_ilegiveis: 1, mensagens_mantidas: 4 });
  expect(await verificarConcordancia(ctx.hub)).toMatchObject({ concordam: false, mensagens_ilegiveis: 1 });
  expect(await idsNaFila(ctx.hub)).toHaveLength(4);
});

import { ATTEMPT_HEADER, DELAY_HEADER, RETRY_EXCHANGE } from '@hub/broker';
import type { Perdida } from './linhas';
import { EtapaDeDesfecho } from './desfecho';
import { TrabalhoDevolvido } from './erros';
import { contado, mensagem, recursosFalsos, reivindicada, repoFalso, resultado, trabalho } from './etapas.test-support';
import { Parando } from './limite-por-destino';
import { CABECALHO_REIVINDICACAO, CABECALHO_TENTATIVA_ANTERIOR, type Posse } from './trabalho';

const TOKEN = '0192f0c8-0000-7000-8000-0000000000aa';

function etapa(repo = repoFalso()) {
  const { recursos, publicados } = recursosFalsos({ repo });
  const vez = { passar: jest.fn(() => undefined) };
  const reivindicacao = { liberar: jest.fn(async () => undefined) };
  const sonda = { devolver: jest.fn(async () => undefined) };
  const e = new EtapaDeDesfecho({ recursos, vez, reivindicacao, sonda });
  return { e, recursos, publicados, vez, reivindicacao, sonda, repo };
}

const registrada = (situacao: 'aguardando_nova_tentativa' | 'fila_de_erro' | 'cancelada', tentativas = 1) => ({
  id: 'x',
  situacao,
  tentativas_no_ciclo_atual: tentativas,
  sequencia: null,
  assinatura_id: 'a',
  entidade_id: 'e',
});

describe('retry or error queue', () => {
  test('When an attempt fails, then its step follows the attempts of the cycle, the last step repeating; a success has none', () => {
    const { e } = etapa();
    const t = trabalho();
    const falha = resultado({ statusHttp: 500 });
    expect(e.atraso(reivindicada(t, { tentativas_no_ciclo_atual: 0 }), falha)?.passoMs).toBe(5_000);
    expect(e.atraso(reivindicada(t, { tentativas_no_ciclo_atual: 2 }), falha)?.passoMs).toBe(120_000);
    expect(e.atraso(reivindicada(t, { tentativas_no_ciclo_atual: 9 }), falha)?.passoMs).toBe(600_000);
    expect(e.atraso(reivindicada(t), resultado())).toBeUndefined();
  });

  test('When a 429 asks for a longer wait than the step, then the job goes to the shortest step that holds it', () => {
    const { e } = etapa();
    const t = trabalho();
    const atraso = e.atraso(reivindicada(t), resultado({ statusHttp: 429, retryAfterMs: 60_000 }));
    expect(atraso).toEqual({ passoMs: 120_000, expiracaoMs: 60_000 });
  });

  test('When the record leaves the delivery waiting, then its job goes to its step queue with its expiry and the attempt traceparent', async () => {
    const { e, publicados, recursos } = etapa();
    const t = trabalho();
    const anterior = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await e.depoisDoRegistro(
      t,
      mensagem(t),
      registrada('aguardando_nova_tentativa'),
      resultado({ statusHttp: 500 }),
      { passoMs: 30_000, expiracaoMs: 27_000 },
      anterior,
    );
    expect(publicados).toHaveLength(1);
    expect(publicados[0]).toMatchObject({
      exchange: RETRY_EXCHANGE,
      routingKey: recursos.topologia.filaDeEntregas,
      options: { expiration: '27000', messageId: t.entrega_id, mandatory: true, headers: { [DELAY_HEADER]: '30000' } },
    });
    expect(publicados[0]!.options.headers?.[CABECALHO_TENTATIVA_ANTERIOR]).toBe(anterior);
  });

  test('When the delivery is out of attempts, then its job goes to the error queue saying why', async () => {
    const { e, publicados, recursos } = etapa();
    const t = trabalho();
    const erro = `HTTP 500 ${'x'.repeat(600)}`;
    await e.depoisDoRegistro(
      t,
      mensagem(t),
      registrada('fila_de_erro', 5),
      resultado({ statusHttp: 500, erro }),
      undefined,
      undefined,
    );
    expect(publicados[0]).toMatchObject({ exchange: recursos.topologia.entregasErro, routingKey: '' });
    expect(publicados[0]!.options.headers).toEqual({
      'hub-tentativas': 5,
      'hub-ultimo-erro': erro.slice(0, 500),
      'hub-motivo': 'tentativas_esgotadas',
    });
  });

  test('When the subscriber answered 410, then the error queue says the subscription ended', async () => {
    const { e, publicados } = etapa();
    const t = trabalho();
    await e.depoisDoRegistro(
      t,
      mensagem(t),
      registrada('fila_de_erro', 1),
      resultado({ statusHttp: 410 }),
      undefined,
      undefined,
    );
    expect(publicados[0]!.options.headers?.['hub-motivo']).toBe('assinatura_encerrada');
  });

  test('When the record cancelled the delivery (subscription deleted), then nothing is published', async () => {
    const { e, publicados } = etapa();
    const t = trabalho();
    await e.depoisDoRegistro(
      t,
      mensagem(t),
      registrada('cancelada'),
      resultado({ statusHttp: 500 }),
      undefined,
      undefined,
    );
    expect(publicados).toHaveLength(0);
  });

  test('When a job fails the consumer before its last try, then its retry carries its claim', async () => {
    const { e, repo } = etapa();
    const t = trabalho();
    const m = mensagem(t, { [ATTEMPT_HEADER]: 2 });
    const erro = new Error('database down');
    expect(await e.depoisDaFalha(t, m, { token: TOKEN }, erro)).toBe(erro);
    expect(m.properties.headers?.[CABECALHO_REIVINDICACAO]).toBe(TOKEN);
    expect(repo.envenenar).not.toHaveBeenCalled();
  });

  test('When a job fails the consumer last try, then its delivery is marked poison (once) and its turn passes', async () => {
    const linha = { entrega_id: 'x', sequencia: '2' } as unknown as Perdida;
    const { e, repo, vez } = etapa(repoFalso({ envenenar: jest.fn(async () => [linha]) }));
    const t = trabalho();
    const erro = new Error('boom');
    expect(await e.depoisDaFalha(t, mensagem(t, { [ATTEMPT_HEADER]: 5 }), { token: TOKEN }, erro)).toBe(erro);
    expect(repo.envenenar).toHaveBeenCalledWith(
      t.entrega_id,
      TOKEN,
      'poison job: the worker failed on it 5 times (boom)',
    );
    expect(vez.passar).toHaveBeenCalledWith([linha]);
  });

  test('When the worker stops while a job waits for its turn, then its claim and probe are given back and it is requeued', async () => {
    const { e, reivindicacao, sonda } = etapa();
    const t = trabalho();
    const posse: Posse = { token: TOKEN, sonda: { origem: 'o', token: 's' } };
    const devolvido = await e.depoisDaFalha(t, mensagem(t), posse, new Parando('the worker is stopping'));
    expect(devolvido).toBeInstanceOf(TrabalhoDevolvido);
    expect((devolvido as TrabalhoDevolvido).motivo).toBe('parando');
    expect(reivindicacao.liberar).toHaveBeenCalledWith(t, TOKEN);
    expect(sonda.devolver).toHaveBeenCalledWith(posse);
  });

  test('When a poison job is found at its claim, then its job goes to the error queue with the delivery limit reason', async () => {
    const { e, publicados, recursos } = etapa();
    const t = trabalho();
    const linha = reivindicada(t, { situacao: 'fila_de_erro', tentativas_no_ciclo_atual: 2, ultimo_erro: 'poison' });
    expect(await e.envenenada(t, mensagem(t), linha)).toBe('envenenado');
    expect(publicados[0]!.options.headers).toEqual({
      'hub-tentativas': 2,
      'hub-ultimo-erro': 'poison',
      'hub-motivo': 'limite_de_entregas',
    });
    expect(await contado(recursos.metricas.trabalhos, { desfecho: 'envenenado' })).toBe(1);
    expect(await contado(recursos.metricas.situacoes, { situacao: 'fila_de_erro' })).toBe(1);
  });

  test('When an unreadable message names no delivery, then the consumer sees its error (dead-lettered as it came)', async () => {
    const { e, publicados } = etapa();
    const m = mensagem(trabalho());
    m.properties.messageId = 'not-a-uuid';
    const erro = new Error('unreadable');
    await expect(e.ilegivel(m, erro)).rejects.toBe(erro);
    expect(publicados).toHaveLength(0);
  });
});

import { DELAY_HEADER, RETRY_EXCHANGE, UnroutableError } from '@hub/broker';
import type { Regras } from '../destinos/destinos';
import { contado, mensagem, PASSOS_MS, recursosFalsos, trabalho } from './etapas.test-support';
import { EtapaDeRetencao, passoDaPausa } from './retencao';
import { CABECALHO_REIVINDICACAO } from './trabalho';

const PAUSADO: Regras = { concorrencia: 1, porSegundo: null, pausado: true, circuito: 'fechado', sondaDevida: false };
const ABERTO: Regras = { concorrencia: 1, porSegundo: null, pausado: false, circuito: 'aberto', sondaDevida: false };
const TOKEN = '0192f0c8-0000-7000-8000-0000000000aa';

function etapa(opcoes: { rota?: string; publicar?: () => Promise<void> } = {}) {
  const { recursos, publicados } = recursosFalsos({ publicar: opcoes.publicar });
  const isolamento = {
    rotaDe: jest.fn(() => opcoes.rota),
    reter: jest.fn(async () => opcoes.rota),
    anotarAdiamento: jest.fn(),
    anotarTrabalho: jest.fn(),
  };
  const reivindicacao = { devolver: jest.fn(async () => undefined) };
  const e = new EtapaDeRetencao({ recursos, isolamento, reivindicacao });
  return { e, recursos, publicados, isolamento, reivindicacao };
}

describe('hold and forward', () => {
  test('The pause waits in the longest step up to a minute, or the shortest when every step is longer', () => {
    expect(passoDaPausa(PASSOS_MS)).toBe(30_000);
    expect(passoDaPausa([120_000, 600_000])).toBe(120_000);
    expect(passoDaPausa([1_000, 60_000, 61_000])).toBe(60_000);
  });

  test('When a held destination can be isolated, then the job goes to its queue without its claim, which is given back', async () => {
    const { e, publicados, reivindicacao, recursos } = etapa({ rota: 'destino.d1' });
    const t = trabalho();
    const m = mensagem(t, { 'hub-tentativa': 2 });
    expect(await e.reter(t, m, 'https://recebe.example', TOKEN, PAUSADO)).toBe('encaminhado');
    expect(reivindicacao.devolver).toHaveBeenCalledWith(t.entrega_id, TOKEN);
    expect(publicados).toHaveLength(1);
    const [p] = publicados;
    expect(p).toMatchObject({ exchange: recursos.topologia.entregas, routingKey: 'destino.d1' });
    expect(p!.options).toMatchObject({ messageId: t.entrega_id, mandatory: true });
    expect(p!.options.headers).toEqual({ 'hub-tentativa': 2 });
    expect(await contado(recursos.metricas.trabalhos, { desfecho: 'encaminhado' })).toBe(1);
  });

  test('When a paused destination cannot be isolated, then the job waits in the pause step carrying its claim', async () => {
    const { e, publicados, recursos } = etapa();
    const t = trabalho();
    expect(await e.reter(t, mensagem(t), 'https://recebe.example', TOKEN, PAUSADO)).toBe('pausado');
    expect(publicados).toEqual([
      expect.objectContaining({ exchange: RETRY_EXCHANGE, routingKey: recursos.topologia.filaDeEntregas }),
    ]);
    expect(publicados[0]!.options.headers).toEqual({ [CABECALHO_REIVINDICACAO]: TOKEN, [DELAY_HEADER]: '30000' });
    expect(publicados[0]!.options.expiration).toBeUndefined();
    expect(await contado(recursos.metricas.trabalhos, { desfecho: 'pausado' })).toBe(1);
  });

  test('When the held destination is its open circuit, then the wait is counted as circuito', async () => {
    const { e, recursos } = etapa();
    const t = trabalho();
    expect(await e.reter(t, mensagem(t), 'https://recebe.example', null, ABERTO)).toBe('circuito');
    expect(await contado(recursos.metricas.trabalhos, { desfecho: 'circuito' })).toBe(1);
  });

  test('When the isolated queue is being removed (unroutable), then the job takes the pause way instead', async () => {
    let vezes = 0;
    const { e, publicados } = etapa({
      rota: 'destino.d1',
      publicar: async () => {
        vezes += 1;
        if (vezes === 1) throw new UnroutableError('no queue');
      },
    });
    const t = trabalho();
    expect(await e.reter(t, mensagem(t), 'https://recebe.example', TOKEN, PAUSADO)).toBe('pausado');
    expect(publicados.map((p) => p.exchange)).toEqual([RETRY_EXCHANGE]);
  });

  test('When a job gets no turn and its destination has no queue of its own, then it is deferred to the shortest step', async () => {
    const { e, publicados, recursos, isolamento } = etapa();
    const t = trabalho();
    expect(await e.semVez(t, mensagem(t), 'https://recebe.example', TOKEN)).toBe('adiado');
    expect(publicados[0]!.options.headers?.[DELAY_HEADER]).toBe('5000');
    expect(isolamento.anotarAdiamento).toHaveBeenCalledWith('https://recebe.example');
    expect(await contado(recursos.metricas.adiadas)).toBe(1);
    expect(await contado(recursos.metricas.trabalhos, { desfecho: 'adiado' })).toBe(1);
  });

  test('When a job gets no turn and its destination was isolated meanwhile, then it goes to that queue, not a delay queue', async () => {
    const { e, publicados, isolamento, reivindicacao } = etapa({ rota: 'destino.d2' });
    const t = trabalho();
    expect(await e.semVez(t, mensagem(t), 'https://recebe.example', TOKEN)).toBe('encaminhado');
    expect(publicados.map((p) => p.routingKey)).toEqual(['destino.d2']);
    expect(reivindicacao.devolver).toHaveBeenCalledWith(t.entrega_id, TOKEN);
    expect(isolamento.anotarAdiamento).not.toHaveBeenCalled();
  });

  test('When a job from the shared queue has no isolated destination, then it stays and counts toward its share', async () => {
    const { e, publicados, isolamento } = etapa();
    const t = trabalho();
    expect(await e.doCompartilhado(t, mensagem(t))).toBe(false);
    expect(publicados).toHaveLength(0);
    expect(isolamento.anotarTrabalho).toHaveBeenCalledWith('https://recebe.example');
  });

  test('When a job from the shared queue without a claim is forwarded, then no claim is given back', async () => {
    const { e, publicados, reivindicacao } = etapa({ rota: 'destino.d3' });
    const t = trabalho();
    expect(await e.doCompartilhado(t, mensagem(t))).toBe(true);
    expect(publicados).toHaveLength(1);
    expect(reivindicacao.devolver).not.toHaveBeenCalled();
  });
});

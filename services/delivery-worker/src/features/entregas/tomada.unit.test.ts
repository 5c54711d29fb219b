import { contado, mensagem, recursosFalsos, trabalho } from './etapas.test-support';
import type { Desfecho } from './erros';
import { EtapaDeTomada } from './tomada';

function etapa() {
  const { recursos } = recursosFalsos();
  const parada = { parando: false, cortado: false };
  const retencao = { doCompartilhado: jest.fn(async () => false) };
  const tentativa = { tentar: jest.fn(async (): Promise<Desfecho> => 'registrado') };
  const desfecho = {
    ilegivel: jest.fn(async () => undefined),
    depoisDaFalha: jest.fn(async (_t: unknown, _m: unknown, _p: unknown, erro: unknown) => erro),
  };
  const e = new EtapaDeTomada({ recursos, parada, retencao, tentativa: tentativa as never, desfecho });
  return { e, parada, retencao, tentativa, desfecho, metricas: recursos.metricas };
}

describe('take', () => {
  test('When a second job of a delivery arrives while the first is under way, then it waits for the first before it tries', async () => {
    const { e, tentativa, metricas } = etapa();
    let soltar!: () => void;
    tentativa.tentar.mockImplementationOnce(
      () => new Promise<Desfecho>((resolve) => (soltar = () => resolve('registrado'))),
    );
    const t = trabalho();
    const primeiro = e.processar(mensagem(t), false);
    const segundo = e.processar(mensagem(t), false);
    await new Promise((r) => setImmediate(r));
    expect(tentativa.tentar).toHaveBeenCalledTimes(1);
    expect(await contado(metricas.trabalhos, { desfecho: 'duplicado' })).toBe(1);
    soltar();
    await Promise.all([primeiro, segundo]);
    expect(tentativa.tentar).toHaveBeenCalledTimes(2);
  });

  test('When a job of the shared queue is forwarded to its isolated destination, then it is not attempted here', async () => {
    const { e, retencao, tentativa } = etapa();
    retencao.doCompartilhado.mockResolvedValue(true);
    expect(await e.processar(mensagem(trabalho()), false)).toBe('encaminhado');
    expect(tentativa.tentar).not.toHaveBeenCalled();
  });

  test('When a job comes from its destination queue, then it is not looked at for forwarding', async () => {
    const { e, retencao } = etapa();
    expect(await e.processar(mensagem(trabalho()), true)).toBe('registrado');
    expect(retencao.doCompartilhado).not.toHaveBeenCalled();
  });

  test('When the message is not a job, then it goes to the unreadable path', async () => {
    const { e, desfecho, tentativa } = etapa();
    const m = mensagem(trabalho());
    m.content = Buffer.from('{"not":"a job"}');
    expect(await e.processar(m, false)).toBe('envenenado');
    expect(desfecho.ilegivel).toHaveBeenCalledTimes(1);
    expect(tentativa.tentar).not.toHaveBeenCalled();
  });

  test('When the attempt fails, then the consumer sees what the failure stage gives', async () => {
    const { e, tentativa, desfecho } = etapa();
    const erro = new Error('database down');
    const visto = new Error('seen by the consumer');
    tentativa.tentar.mockRejectedValue(erro);
    desfecho.depoisDaFalha.mockResolvedValue(visto);
    await expect(e.processar(mensagem(trabalho()), false)).rejects.toBe(visto);
    expect(desfecho.depoisDaFalha).toHaveBeenCalledWith(expect.anything(), expect.anything(), expect.anything(), erro);
  });

  test('When the worker is stopping, then a new job goes back at once', async () => {
    const { e, parada, tentativa } = etapa();
    parada.parando = true;
    await expect(e.processar(mensagem(trabalho()), false)).rejects.toMatchObject({ motivo: 'parando' });
    expect(tentativa.tentar).not.toHaveBeenCalled();
  });
});

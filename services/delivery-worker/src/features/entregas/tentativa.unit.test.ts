import type { Regras } from '../destinos/destinos';
import { TrabalhoDevolvido } from './erros';
import { mensagem, reivindicada, resultado, trabalho } from './etapas.test-support';
import { type EtapasDaTentativa, TentativaDeEntrega } from './tentativa';
import type { Posse } from './trabalho';

const LIVRE: Regras = { concorrencia: 2, porSegundo: null, pausado: false, circuito: 'fechado', sondaDevida: false };

/** Every stage a fake that says what it did; `ordem` is the order they were called in. */
function etapas(opcoes: { regras?: Regras[]; turno?: boolean; sucesso?: boolean } = {}) {
  const ordem: string[] = [];
  const anota =
    <T>(nome: string, valor: T) =>
    async (..._args: unknown[]) => {
      ordem.push(nome);
      return valor;
    };
  const t = trabalho();
  const linha = reivindicada(t);
  const liberar = jest.fn();
  let i = 0;
  const regras = opcoes.regras ?? [LIVRE];
  const e: EtapasDaTentativa = {
    destinos: { regras: () => regras[Math.min(i++, regras.length - 1)]! },
    limite: { entrar: jest.fn(async () => (opcoes.turno === false ? null : liberar)) },
    parada: { parando: false, cortado: false },
    reivindicacao: {
      reivindicar: jest.fn(anota('reivindicar', { tipo: 'reivindicada' as const, linha, token: 'tk' })),
    },
    retencao: {
      reter: jest.fn(anota('reter', 'encaminhado' as const)),
      semVez: jest.fn(anota('semVez', 'adiado' as const)),
    },
    sonda: {
      naVez: jest.fn(anota('naVez', 'segue' as const)),
      depoisDoEnvio: jest.fn(anota('depoisDoEnvio', undefined)),
    },
    envio: {
      noTrecho: jest.fn(async (_t, _m, _r, _o, f) => f({ span: undefined, rastro: undefined } as never)),
      enviar: jest.fn(
        anota('enviar', {
          resultado: resultado({ statusHttp: opcoes.sucesso === false ? 500 : 200 }),
          cabecalhos: {} as never,
        }),
      ),
      anotar: jest.fn(() => ordem.push('anotar')),
    },
    registro: { registrar: jest.fn(anota('registrar', { ...linha, situacao: 'concluida' as const })) },
    desfecho: {
      envenenada: jest.fn(anota('envenenada', 'envenenado' as const)),
      atraso: jest.fn(() => undefined),
      depoisDoRegistro: jest.fn(anota('depoisDoRegistro', undefined)),
    },
  };
  return { e, t, ordem, liberar, tentativa: new TentativaDeEntrega(e) };
}

describe('one job through the stages', () => {
  test('When the destination is free, then claim, turn, probe check, send, note, record and outcome come in that order', async () => {
    const { tentativa, t, ordem, liberar } = etapas();
    const posse: Posse = {};
    expect(await tentativa.tentar(t, mensagem(t), posse)).toBe('registrado');
    expect(ordem).toEqual([
      'reivindicar',
      'naVez',
      'enviar',
      'depoisDoEnvio',
      'anotar',
      'registrar',
      'depoisDoRegistro',
    ]);
    expect(posse.token).toBe('tk');
    expect(liberar).toHaveBeenCalled();
  });

  test('When the destination is held before the claim, then the job is held and never claimed', async () => {
    const { tentativa, t, ordem, e } = etapas({ regras: [{ ...LIVRE, pausado: true }] });
    expect(await tentativa.tentar(t, mensagem(t), {})).toBe('encaminhado');
    expect(ordem).toEqual(['reter']);
    expect(e.retencao.reter).toHaveBeenCalledWith(
      t,
      expect.anything(),
      'https://recebe.example',
      null,
      expect.anything(),
    );
  });

  test('When the destination is held only after the claim (its URL moved), then the job leaves holding its claim', async () => {
    const { tentativa, t, ordem, e } = etapas({ regras: [LIVRE, { ...LIVRE, circuito: 'aberto' }] });
    expect(await tentativa.tentar(t, mensagem(t), {})).toBe('encaminhado');
    expect(ordem).toEqual(['reivindicar', 'reter']);
    expect(e.retencao.reter).toHaveBeenCalledWith(t, expect.anything(), expect.any(String), 'tk', expect.anything());
  });

  test('When no turn comes within the wait, then the job is deferred, not sent', async () => {
    const { tentativa, t, ordem } = etapas({ turno: false });
    expect(await tentativa.tentar(t, mensagem(t), {})).toBe('adiado');
    expect(ordem).toEqual(['reivindicar', 'semVez']);
  });

  test('When the worker stops while the job waits for its turn, then it goes back untouched', async () => {
    const { tentativa, t, e, liberar } = etapas();
    (e.limite.entrar as jest.Mock).mockImplementation(async () => {
      e.parada.parando = true;
      return liberar;
    });
    await expect(tentativa.tentar(t, mensagem(t), {})).rejects.toEqual(new TrabalhoDevolvido('parando'));
    expect(liberar).toHaveBeenCalled();
    expect(e.envio.enviar).not.toHaveBeenCalled();
  });

  test('When the stop cut a failing POST, then nothing is recorded and the job goes back untouched', async () => {
    const { tentativa, t, e, ordem } = etapas({ sucesso: false });
    e.parada.cortado = true;
    await expect(tentativa.tentar(t, mensagem(t), {})).rejects.toBeInstanceOf(TrabalhoDevolvido);
    expect(ordem).toEqual(['reivindicar', 'naVez', 'enviar']);
  });

  test('When the claim finds a poison job, then it goes to the error queue and is not attempted', async () => {
    const { tentativa, t, e, ordem } = etapas();
    (e.reivindicacao.reivindicar as jest.Mock).mockResolvedValue({ tipo: 'envenenada', linha: reivindicada(t) });
    expect(await tentativa.tentar(t, mensagem(t), {})).toBe('envenenado');
    expect(ordem).toEqual(['envenenada']);
  });
});

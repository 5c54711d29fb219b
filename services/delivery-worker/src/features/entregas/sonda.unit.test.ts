import type { Regras } from '../destinos/destinos';
import { mensagem, resultado, trabalho } from './etapas.test-support';
import { EtapaDaSonda } from './sonda';
import type { Posse } from './trabalho';

const ORIGEM = 'https://recebe.example';
const regras = (extra: Partial<Regras>): Regras => ({
  concorrencia: 4,
  porSegundo: null,
  pausado: false,
  circuito: 'fechado',
  sondaDevida: false,
  ...extra,
});

function etapa(sequencia: Regras[], sonda: string | null = null) {
  let i = 0;
  const destinos = {
    regras: jest.fn(() => sequencia[Math.min(i++, sequencia.length - 1)]!),
    anotar: jest.fn(),
    sondar: jest.fn(async () => sonda),
    concluirSonda: jest.fn(async () => undefined),
    devolverSonda: jest.fn(async () => undefined),
  };
  const retencao = {
    reter: jest.fn(async () => 'encaminhado' as const),
    esperarPausa: jest.fn(async () => 'circuito' as const),
  };
  return { e: new EtapaDaSonda({ destinos, retencao }), destinos, retencao };
}

describe('circuit probe', () => {
  test('When the circuit is closed, then the job goes on without asking for a probe', async () => {
    const { e, destinos } = etapa([regras({})]);
    const t = trabalho();
    expect(await e.naVez(t, mensagem(t), ORIGEM, 'tk', {})).toBe('segue');
    expect(destinos.sondar).not.toHaveBeenCalled();
  });

  test('When the destination was paused while the job waited for its turn, then it is held', async () => {
    const { e, retencao } = etapa([regras({ pausado: true })]);
    const t = trabalho();
    expect(await e.naVez(t, mensagem(t), ORIGEM, 'tk', {})).toBe('encaminhado');
    expect(retencao.reter).toHaveBeenCalledWith(t, expect.anything(), ORIGEM, 'tk', regras({ pausado: true }));
  });

  test('When the circuit is half-open and the job gets the probe, then it goes on holding the probe', async () => {
    const { e } = etapa([regras({ circuito: 'aberto', sondaDevida: true })], 'sonda-1');
    const posse: Posse = {};
    const t = trabalho();
    expect(await e.naVez(t, mensagem(t), ORIGEM, 'tk', posse)).toBe('segue');
    expect(posse.sonda).toEqual({ origem: ORIGEM, token: 'sonda-1' });
  });

  test('When another job has the probe, then this one goes back to be held, not attempted', async () => {
    const meio = regras({ circuito: 'meio_aberto', sondaDevida: false });
    const { e, retencao } = etapa([regras({ circuito: 'aberto', sondaDevida: true }), meio]);
    const t = trabalho();
    const posse: Posse = {};
    expect(await e.naVez(t, mensagem(t), ORIGEM, 'tk', posse)).toBe('encaminhado');
    expect(retencao.reter).toHaveBeenCalledWith(t, expect.anything(), ORIGEM, 'tk', meio);
    expect(posse.sonda).toBeUndefined();
  });

  test('When the probe was not taken but is still due (the database did not answer), then the job waits in a delay queue', async () => {
    const devida = regras({ circuito: 'aberto', sondaDevida: true });
    const { e, retencao } = etapa([devida, devida]);
    const t = trabalho();
    expect(await e.naVez(t, mensagem(t), ORIGEM, 'tk', {})).toBe('circuito');
    expect(retencao.esperarPausa).toHaveBeenCalledWith(expect.anything(), 'tk', devida);
    expect(retencao.reter).not.toHaveBeenCalled();
  });

  test('When asking found the circuit closed (by hand, or elsewhere), then the job goes on', async () => {
    const { e } = etapa([regras({ circuito: 'aberto', sondaDevida: true }), regras({})]);
    const t = trabalho();
    expect(await e.naVez(t, mensagem(t), ORIGEM, 'tk', {})).toBe('segue');
  });

  test.each([
    [resultado({ statusHttp: 503 }), false, 'HTTP 503'],
    [resultado({ statusHttp: 429 }), false, 'HTTP 429'],
    // a live server refusing one delivery closes the circuit: the origin is up
    [resultado({ statusHttp: 404 }), true, 'HTTP 404'],
    [resultado({ statusHttp: 200 }), true, 'HTTP 200'],
    [
      resultado({ statusHttp: null, erro: 'timeout: no answer within 10000 ms' }),
      false,
      'timeout: no answer within 10000 ms',
    ],
  ])('When the probe answers %#, then its result goes to the circuit (closes: %s)', async (r, fecha, texto) => {
    const { e, destinos } = etapa([regras({})]);
    const posse: Posse = { sonda: { origem: ORIGEM, token: 'sonda-1' } };
    await e.depoisDoEnvio(ORIGEM, r, posse);
    expect(destinos.anotar).toHaveBeenCalledWith(ORIGEM, r.sucesso, r.duracaoMs, r.iniciadaEm, true, fecha);
    expect(destinos.concluirSonda).toHaveBeenCalledWith(ORIGEM, 'sonda-1', fecha, texto);
    expect(posse.sonda).toBeUndefined();
  });

  test('When an ordinary attempt fails with a 4xx, then it counts in the figures but not against the circuit', async () => {
    const { e, destinos } = etapa([regras({})]);
    const r = resultado({ statusHttp: 422 });
    await e.depoisDoEnvio(ORIGEM, r, {});
    expect(destinos.anotar).toHaveBeenCalledWith(ORIGEM, false, r.duracaoMs, r.iniciadaEm, false, true);
    expect(destinos.concluirSonda).not.toHaveBeenCalled();
  });

  test('When a probe is given back (not attempted), then its lease ends and the job no longer holds it', async () => {
    const { e, destinos } = etapa([regras({})]);
    const posse: Posse = { sonda: { origem: ORIGEM, token: 'sonda-1' } };
    await e.devolver(posse);
    await e.devolver(posse);
    expect(destinos.devolverSonda).toHaveBeenCalledTimes(1);
    expect(destinos.devolverSonda).toHaveBeenCalledWith(ORIGEM, 'sonda-1');
    expect(posse.sonda).toBeUndefined();
  });
});

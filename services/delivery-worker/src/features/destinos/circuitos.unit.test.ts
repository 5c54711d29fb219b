import { createLogger } from '@hub/log';
import { Circuitos, type VistaDasLinhas } from './circuitos';
import type { CircuitoRepository, Linha, Transicao } from './destinos.repository';

const ORIGEM = 'https://recebe.example';
const AGORA = Date.parse('2026-12-02T10:00:00Z');
const ABERTO: Transicao = {
  circuito: 'aberto',
  circuito_desde: new Date(AGORA),
  circuito_aberto_ate: new Date(AGORA + 30_000),
  circuito_sonda_ate: null,
};
const linha = (extra: Partial<Linha> = {}): Linha => ({
  origem: ORIGEM,
  concorrencia_maxima: 10,
  limite_por_segundo: null,
  pausado: false,
  circuito: 'fechado',
  circuito_desde: null,
  circuito_aberto_ate: null,
  circuito_sonda_ate: null,
  ...extra,
});

/** Circuits over a fake repository and a map of rows; `workers` share the threshold. */
function circuitos(opcoes: { workers?: number; minimoDeFalhas?: number; repo?: Partial<CircuitoRepository> } = {}) {
  const linhas = new Map<string, Linha>([[ORIGEM, linha()]]);
  const repo = {
    abrir: jest.fn(async () => ABERTO as Transicao | undefined),
    sondar: jest.fn(async () => undefined),
    concluirSonda: jest.fn(async () => undefined),
    devolverSonda: jest.fn(async () => undefined),
    ...opcoes.repo,
  };
  const vista: VistaDasLinhas = {
    linha: (o) => linhas.get(o),
    mudar: (o, t) => linhas.set(o, { ...(linhas.get(o) ?? linha({ origem: o })), ...t }),
    workers: () => opcoes.workers ?? 1,
  };
  const transicoes: [string, string][] = [];
  const c = new Circuitos(
    {
      repo: repo as unknown as CircuitoRepository,
      logger: createLogger('circuitos-unidade', 'silent'),
      relogio: { agora: () => AGORA },
      limiares: {
        minimoDeFalhas: opcoes.minimoDeFalhas ?? 4,
        parcela: 0.5,
        janelaMs: 60_000,
        abertoMs: 30_000,
        abertoMaximoMs: 600_000,
        sondaMs: 25_000,
      },
      aoMudarCircuito: (origem, para) => transicoes.push([origem, para]),
    },
    vista,
  );
  return { c, repo, linhas, transicoes };
}

const esperar = () => new Promise((r) => setImmediate(r));

describe('circuit opening and probes', () => {
  test('When a worker sees its share of the threshold fail, then it opens the circuit in the row and obeys it at once', async () => {
    // 4 failures over 2 workers: 2 each
    const { c, repo, linhas, transicoes } = circuitos({ workers: 2 });
    c.contar(ORIGEM, false, AGORA - 2_000);
    await esperar();
    expect(repo.abrir).not.toHaveBeenCalled();
    c.contar(ORIGEM, false, AGORA - 1_000);
    await esperar();
    expect(repo.abrir).toHaveBeenCalledTimes(1);
    const [[origem, contagem]] = (repo.abrir as jest.Mock).mock.calls as unknown as [
      [string, { falhas: number; tentativas: number; desdeMs: number }],
    ];
    expect(origem).toBe(ORIGEM);
    expect(contagem).toEqual({ falhas: 2, tentativas: 2, desdeMs: AGORA - 2_000 });
    expect(linhas.get(ORIGEM)?.circuito).toBe('aberto');
    expect(transicoes).toEqual([[ORIGEM, 'aberto']]);
  });

  test('When failures are fewer than the share of the attempts, then the circuit stays closed', async () => {
    const { c, repo } = circuitos({ minimoDeFalhas: 2 });
    for (let i = 0; i < 5; i += 1) c.contar(ORIGEM, true, AGORA - 5_000 + i);
    c.contar(ORIGEM, false, AGORA - 100);
    c.contar(ORIGEM, false, AGORA - 50);
    await esperar();
    // 2 of 7 attempts failed in the window, under half; the recent part (10 s) holds all 7 too
    expect(repo.abrir).not.toHaveBeenCalled();
  });

  test('When the threshold is 0, then circuits never open', async () => {
    const { c, repo } = circuitos({ minimoDeFalhas: 0 });
    for (let i = 0; i < 10; i += 1) c.contar(ORIGEM, false, AGORA - i);
    await esperar();
    expect(repo.abrir).not.toHaveBeenCalled();
  });

  test('When the circuit is not closed, then attempts are not counted toward opening it', async () => {
    const { c, repo, linhas } = circuitos({ minimoDeFalhas: 1 });
    linhas.set(ORIGEM, linha({ circuito: 'meio_aberto' }));
    c.contar(ORIGEM, false, AGORA);
    await esperar();
    expect(repo.abrir).not.toHaveBeenCalled();
  });

  test('When an opening is under way, then further failures do not send a second one', async () => {
    let abrir!: (t: Transicao) => void;
    const { c, repo } = circuitos({
      minimoDeFalhas: 1,
      repo: { abrir: jest.fn(() => new Promise<Transicao>((r) => (abrir = r))) },
    });
    c.contar(ORIGEM, false, AGORA - 2);
    c.contar(ORIGEM, false, AGORA - 1);
    await esperar();
    expect(repo.abrir).toHaveBeenCalledTimes(1);
    abrir(ABERTO);
  });

  test('When a refresh read before a transition comes back, then the transition stands over it', async () => {
    const { c, linhas } = circuitos({ minimoDeFalhas: 1 });
    const inicio = c.geracao;
    c.contar(ORIGEM, false, AGORA);
    await esperar();
    const lidas = new Map([[ORIGEM, linha()]]); // read while the opening was under way: still fechado
    c.reaplicar(lidas, inicio);
    expect(lidas.get(ORIGEM)?.circuito).toBe('aberto');
    // the next refresh (begun after it) is believed as it is
    const depois = new Map([[ORIGEM, linha()]]);
    c.reaplicar(depois, c.geracao);
    expect(depois.get(ORIGEM)?.circuito).toBe('fechado');
    expect(linhas.get(ORIGEM)?.circuito).toBe('aberto');
  });

  test('When a job takes the probe, then it gets a token and the listeners learn the circuit is half-open', async () => {
    const meio = {
      ...ABERTO,
      circuito: 'meio_aberto' as const,
      circuito_sonda_ate: new Date(AGORA + 25_000),
      tomada: true,
      de: 'aberto' as const,
    };
    const { c, repo, linhas, transicoes } = circuitos({ repo: { sondar: jest.fn(async () => meio) } });
    const ouvidos: string[] = [];
    c.aoMudar((o) => ouvidos.push(o));
    const token = await c.sondar(ORIGEM);
    expect(token).toEqual(expect.any(String));
    expect(repo.sondar).toHaveBeenCalledWith(ORIGEM, token, 25_000);
    expect(linhas.get(ORIGEM)?.circuito).toBe('meio_aberto');
    expect(ouvidos).toEqual([ORIGEM]);
    expect(transicoes).toEqual([[ORIGEM, 'meio_aberto']]);
  });

  test('When another worker has the probe, then no token, but this process now knows the row', async () => {
    const tomadaPorOutro = { ...ABERTO, circuito: 'meio_aberto' as const, tomada: false, de: 'meio_aberto' as const };
    const { c, linhas, transicoes } = circuitos({ repo: { sondar: jest.fn(async () => tomadaPorOutro) } });
    expect(await c.sondar(ORIGEM)).toBeNull();
    expect(linhas.get(ORIGEM)?.circuito).toBe('meio_aberto');
    expect(transicoes).toEqual([]);
  });

  test('When the probe statement fails, then no token (a later job tries again)', async () => {
    const { c } = circuitos({ repo: { sondar: jest.fn(async () => Promise.reject(new Error('down'))) } });
    expect(await c.sondar(ORIGEM)).toBeNull();
  });

  test('When the probe failed, then the circuit opens again with the probe result in its reason', async () => {
    const { c, repo, transicoes } = circuitos({ repo: { concluirSonda: jest.fn(async () => ABERTO) } });
    await c.concluirSonda(ORIGEM, 'tk', false, 'HTTP 503');
    expect(repo.concluirSonda).toHaveBeenCalledWith(
      ORIGEM,
      'tk',
      false,
      30_000,
      600_000,
      'the probe failed (HTTP 503)',
    );
    expect(transicoes).toEqual([[ORIGEM, 'aberto']]);
  });
});

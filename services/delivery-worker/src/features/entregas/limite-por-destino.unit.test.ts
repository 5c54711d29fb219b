import { type LimitesDaOrigem, LimitePorDestino, Parando } from './limite-por-destino';

// A pure rule of the worker's hot path, on jest's fake clock: the waits and the per-second tokens
// are timers and performance.now(), so the test moves time itself instead of sleeping.
// The worker's own tests (destinos.test.ts, equidade.test.ts) cover it with real destinations.

const A = 'http://a.example:80';
const B = 'http://b.example:80';
const ESPERA_MS = 1000;

type Turno = (() => void) | null;

/** The state of a promise without waiting for it. */
async function estado<T>(promise: Promise<T>): Promise<{ pendente: true } | { valor: T }> {
  const pendente = Symbol('pendente');
  await jest.advanceTimersByTimeAsync(0);
  return Promise.race([promise, Promise.resolve(pendente)]).then((v) =>
    v === pendente ? { pendente: true } : { valor: v as T },
  );
}

let limites: Map<string, LimitesDaOrigem>;
let limite: LimitePorDestino;

beforeEach(() => {
  jest.useFakeTimers();
  limites = new Map([
    [A, { concorrencia: 2, porSegundo: null }],
    [B, { concorrencia: 2, porSegundo: null }],
  ]);
  limite = new LimitePorDestino(
    (origem) => limites.get(origem)!,
    ESPERA_MS,
    () => performance.now(),
  );
});

afterEach(() => {
  limite.dispensarEsperas();
  jest.useRealTimers();
});

describe('LimitePorDestino', () => {
  it('When an origin has its concorrencia of POSTs under way, then the next job waits until one is over, and other origins are not held', async () => {
    const [t1, t2] = await Promise.all([limite.entrar(A), limite.entrar(A)]);
    expect(t1).toEqual(expect.any(Function));
    expect(t2).toEqual(expect.any(Function));
    const terceiro = limite.entrar(A);
    expect(await estado(terceiro)).toEqual({ pendente: true });
    expect(limite.ativos(A)).toBe(2);

    expect(await limite.entrar(B)).toEqual(expect.any(Function));
    expect(limite.ativos(B)).toBe(1);

    t1!();
    expect(await estado(terceiro)).toEqual({ valor: expect.any(Function) });
    expect(limite.ativos(A)).toBe(2);
  });

  it('When a turn is given back twice, then it counts once', async () => {
    const turno = await limite.entrar(A);
    turno!();
    turno!();
    expect(limite.ativos(A)).toBe(0);
    await limite.entrar(A);
    await limite.entrar(A);
    expect(limite.ativos(A)).toBe(2);
  });

  it('When no turn comes within esperaMaximaMs, then the job gets null at that moment and leaves the line', async () => {
    await limite.entrar(A);
    await limite.entrar(A);
    const esperando = limite.entrar(A);
    await jest.advanceTimersByTimeAsync(ESPERA_MS - 1);
    expect(await estado(esperando)).toEqual({ pendente: true });
    await jest.advanceTimersByTimeAsync(1);
    expect(await estado(esperando)).toEqual({ valor: null });
    expect(limite.ativos(A)).toBe(2);
  });

  it('When several jobs wait, then they get their turns in the order they came, and a newcomer queues behind them', async () => {
    const t1 = await limite.entrar(A);
    const t2 = await limite.entrar(A);
    const ordem: string[] = [];
    const fila = ['primeiro', 'segundo', 'terceiro'].map((nome) =>
      limite.entrar(A).then((turno: Turno) => {
        ordem.push(nome);
        return turno;
      }),
    );
    t1!();
    const primeiro = await fila[0]!;
    t2!();
    await fila[1];
    // A place is free now, but the third waits for it: it came first.
    primeiro!();
    expect(await estado(fila[2]!)).toEqual({ valor: expect.any(Function) });
    expect(ordem).toEqual(['primeiro', 'segundo', 'terceiro']);
  });

  it('When porSegundo is set, then a second holds at most that many starts and the next job starts when a token is due', async () => {
    limites.set(A, { concorrencia: 10, porSegundo: 2 });
    const turnos = [await limite.entrar(A), await limite.entrar(A)];
    for (const turno of turnos) turno!();
    const terceiro = limite.entrar(A);
    await jest.advanceTimersByTimeAsync(499);
    expect(await estado(terceiro)).toEqual({ pendente: true });
    await jest.advanceTimersByTimeAsync(1);
    expect(await estado(terceiro)).toEqual({ valor: expect.any(Function) });
  });

  it('When the limits of an origin are raised, then reavaliar gives the waiting jobs their turns at once', async () => {
    limites.set(A, { concorrencia: 1, porSegundo: null });
    await limite.entrar(A);
    const esperando = limite.entrar(A);
    expect(await estado(esperando)).toEqual({ pendente: true });
    limites.set(A, { concorrencia: 2, porSegundo: null });
    limite.reavaliar();
    expect(await estado(esperando)).toEqual({ valor: expect.any(Function) });
  });

  it('When the worker stops, then every waiting job is refused with Parando and the POSTs under way keep their turns', async () => {
    await limite.entrar(A);
    await limite.entrar(A);
    const recusa = expect(limite.entrar(A)).rejects.toBeInstanceOf(Parando);
    limite.dispensarEsperas();
    await recusa;
    expect(limite.ativos(A)).toBe(2);
  });

  it('When an origin has nothing under way nor waiting, then it is forgotten; with a rate, only once its bucket is full again', async () => {
    (await limite.entrar(A))!();
    expect(limite.emAndamento()).toEqual([]);

    limites.set(B, { concorrencia: 2, porSegundo: 1 });
    (await limite.entrar(B))!();
    expect(limite.emAndamento()).toEqual([[B, 0]]);
    await jest.advanceTimersByTimeAsync(1000);
    // Looked at again on the next exit: the bucket is full, so B goes.
    (await limite.entrar(B))!();
    await jest.advanceTimersByTimeAsync(1000);
    limite.reavaliar();
    expect(limite.emAndamento()).toEqual([]);
  });
});

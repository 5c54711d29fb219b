import { AppError } from '@hub/http';
import { Compilador } from './compilacao';

/**
 * Registrations (schemas being registered or checked: an operator's requests, which store nothing
 * until they compile) never take every worker nor queue without bound (compilacao.ts).
 */
const PADROES = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`${i}`, { type: 'integer' }]));
const LENTO = {
  esquema: { type: 'object', patternProperties: PADROES },
  draft: '2020-12' as const,
  variante: 'rapido' as const,
  verificar: true,
};

test('When more registrations wait for a worker than maxFilaDeRegistros, then the next is refused with 503 and Retry-After at once, and those accepted still compile', async () => {
  const compilador = new Compilador({ limiteMs: 1_000, maxWorkers: 2, maxFilaDeRegistros: 1 });
  try {
    // One compiles (registrations hold at most one of the two workers), one waits.
    const aceitos = [compilador.compilar(LENTO, 'registro'), compilador.compilar(LENTO, 'registro')];
    const recusa = await compilador.compilar(LENTO, 'registro').catch((error: unknown) => error);
    expect(recusa).toBeInstanceOf(AppError);
    expect(recusa).toMatchObject({ status: 503, codigo: 'compilacao_ocupada', headers: { 'Retry-After': '1' } });
    // A first use is never refused nor queued behind them.
    const uso = await compilador.compilar({ esquema: { type: 'object' }, draft: '2020-12', variante: 'rapido' });
    expect(uso).toMatchObject({ compilou: true });
    expect(await Promise.all(aceitos)).toEqual([
      expect.objectContaining({ excedeu: true }),
      expect.objectContaining({ excedeu: true }),
    ]);
  } finally {
    await compilador.encerrar();
  }
}, 60_000);

test('When a registration could not start in time to be answered within esperaMaximaMs, then it leaves the line refused with 503 (not a gateway 504 while it still compiles)', async () => {
  const compilador = new Compilador({ limiteMs: 1_000, maxWorkers: 2, esperaMaximaMs: 1_500 });
  try {
    const primeiro = compilador.compilar(LENTO, 'registro');
    const inicio = Date.now();
    const recusa = await compilador.compilar(LENTO, 'registro').catch((error: unknown) => error);
    expect(recusa).toMatchObject({ status: 503, codigo: 'compilacao_ocupada', headers: { 'Retry-After': '1' } });
    // Refused once its 500 ms of waiting were over, before the first registration gave its worker back.
    expect(Date.now() - inicio).toBeLessThan(950);
    expect(await primeiro).toMatchObject({ excedeu: true });
    const depois = await compilador.compilar({ ...LENTO, esquema: { type: 'object' } }, 'registro');
    expect(depois).toMatchObject({ compilou: true });
  } finally {
    await compilador.encerrar();
  }
}, 60_000);

test('When a compilation needs more than a worker’s heap, then it is refused naming the bound (not a 500), and the next schema compiles in a fresh worker', async () => {
  const compilador = new Compilador({ limiteMs: 60_000, maxWorkers: 1, memoriaMb: 16 });
  try {
    expect(await compilador.compilar(LENTO, 'uso')).toEqual({
      compilou: false,
      excedeu: true,
      mensagem: expect.stringContaining('needs more than 16 MB to compile'),
    });
    const seguinte = await compilador.compilar({ esquema: { type: 'object' }, draft: '2020-12', variante: 'rapido' });
    expect(seguinte).toMatchObject({ compilou: true });
  } finally {
    await compilador.encerrar();
  }
}, 60_000);

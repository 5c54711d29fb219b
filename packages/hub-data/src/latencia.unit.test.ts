import {
  BALDES_POR_DOBRO,
  baldeDaLatencia,
  ERRO_MAXIMO_DA_LATENCIA,
  LIMITES_DA_LATENCIA,
  latenciaDoBalde,
  percentilDaLatencia,
  QUANTIDADE_DE_BALDES,
} from './latencia';

/** The exact nearest-rank percentile of a list of latencies. */
const exato = (latencias: number[], p: number) =>
  [...latencias].sort((a, b) => a - b)[Math.ceil((p * latencias.length) / 100) - 1] as number;

const histograma = (latencias: number[]) => {
  const baldes = new Map<number, number>();
  for (const ms of latencias) baldes.set(baldeDaLatencia(ms), (baldes.get(baldeDaLatencia(ms)) ?? 0) + 1);
  return baldes;
};

/** A reproducible spread of latencies (a linear congruential generator, log-uniform from 1 ms to ~2 h). */
function latenciasSorteadas(n: number, semente: number): number[] {
  let x = semente;
  return Array.from({ length: n }, () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return Math.floor(2 ** ((x / 2 ** 31) * 23));
  });
}

describe('latency buckets of the summary', () => {
  it('When the bounds are made, then they start at 1 ms, rise strictly, end at 2^32 ms, and no two buckets in a row are wider than 2^(1/8)', () => {
    expect(LIMITES_DA_LATENCIA[0]).toBe(1);
    expect(LIMITES_DA_LATENCIA.at(-1)).toBe(2 ** 32);
    expect(QUANTIDADE_DE_BALDES).toBe(LIMITES_DA_LATENCIA.length + 1);
    for (let i = 1; i < LIMITES_DA_LATENCIA.length; i++) {
      const [antes, limite] = [LIMITES_DA_LATENCIA[i - 1] as number, LIMITES_DA_LATENCIA[i] as number];
      expect(limite).toBeGreaterThan(antes);
      // a bucket of more than one whole millisecond is at most one step of 2^(1/8) wide, rounding aside
      if (limite - antes > 1) expect(limite / antes).toBeLessThanOrEqual(2 ** (1 / BALDES_POR_DOBRO) + 1 / antes);
    }
  });

  it('When latencies are bucketed, then 0 (and a negative one, from clocks apart) is bucket 0, a bound opens its bucket, and 2^32 ms on is the last', () => {
    const i = LIMITES_DA_LATENCIA.indexOf(1_024);
    expect(i).toBeGreaterThan(0);
    expect([-5, 0, 0.9, 1, 1.5, 2, 1_023, 1_024, 2 ** 32 - 1, 2 ** 32, 2 ** 45].map(baldeDaLatencia)).toEqual([
      0,
      0,
      0,
      1,
      1,
      2,
      i,
      i + 1,
      QUANTIDADE_DE_BALDES - 2,
      QUANTIDADE_DE_BALDES - 1,
      QUANTIDADE_DE_BALDES - 1,
    ]);
  });

  it(`When each bucket stands for one value, then every whole millisecond of the bucket is within ${ERRO_MAXIMO_DA_LATENCIA * 100} % of it`, () => {
    let pior = 0;
    for (let balde = 1; balde < QUANTIDADE_DE_BALDES - 1; balde++) {
      const [primeiro, ultimo] = [LIMITES_DA_LATENCIA[balde - 1] as number, (LIMITES_DA_LATENCIA[balde] as number) - 1];
      const valor = latenciaDoBalde(balde);
      expect([baldeDaLatencia(primeiro), baldeDaLatencia(ultimo), baldeDaLatencia(valor)]).toEqual([
        balde,
        balde,
        balde,
      ]);
      // the error grows away from the value, so the ends of the bucket are the worst
      pior = Math.max(pior, Math.abs(valor - primeiro) / primeiro, Math.abs(valor - ultimo) / ultimo);
    }
    expect(pior).toBeLessThanOrEqual(ERRO_MAXIMO_DA_LATENCIA);
    expect(pior).toBeGreaterThan(ERRO_MAXIMO_DA_LATENCIA - 0.005); // the bound is the real one, not a loose one
    expect([latenciaDoBalde(0), latenciaDoBalde(1), latenciaDoBalde(QUANTIDADE_DE_BALDES - 1)]).toEqual([
      0,
      1,
      2 ** 32,
    ]);
    expect(() => latenciaDoBalde(QUANTIDADE_DE_BALDES)).toThrow(RangeError);
  });

  it('When percentiles are read from the histogram of many latencies, then p50 and p99 are within the bound of the exact ones', () => {
    for (const semente of [1, 7, 42]) {
      const latencias = latenciasSorteadas(5_000, semente);
      const baldes = histograma(latencias);
      for (const p of [50, 99]) {
        const lido = percentilDaLatencia(baldes, p) as number;
        const certo = exato(latencias, p);
        expect(Math.abs(lido - certo) / certo).toBeLessThanOrEqual(ERRO_MAXIMO_DA_LATENCIA);
      }
    }
  });

  it('When the rank is on a bucket edge, then the nearest rank decides: p50 of 100 is the 50th, p99 of 100 the 99th', () => {
    // 50 at 10 ms, 49 at 1,000 ms, 1 at 100,000 ms
    const baldes = new Map([
      [baldeDaLatencia(10), 50],
      [baldeDaLatencia(1_000), 49],
      [baldeDaLatencia(100_000), 1],
    ]);
    expect(percentilDaLatencia(baldes, 50)).toBe(latenciaDoBalde(baldeDaLatencia(10)));
    expect(percentilDaLatencia(baldes, 99)).toBe(latenciaDoBalde(baldeDaLatencia(1_000)));
    expect(percentilDaLatencia(baldes, 100)).toBe(latenciaDoBalde(baldeDaLatencia(100_000)));
    expect(percentilDaLatencia(new Map([[baldeDaLatencia(7), 1]]), 1)).toBe(7);
  });

  it('When the histogram is empty or holds only zeros, then there is no percentile; a percentile outside 1…100 is refused', () => {
    expect(percentilDaLatencia(new Map(), 50)).toBeNull();
    expect(percentilDaLatencia(new Map([[5, 0]]), 99)).toBeNull();
    for (const p of [0, 0.5, 101, Number.NaN])
      expect(() => percentilDaLatencia(new Map([[1, 1]]), p)).toThrow(RangeError);
  });
});

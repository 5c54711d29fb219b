import { BALDES_DE_DURACAO, baldeDaDuracao, percentil, somarDuracao } from './duracoes';

describe('duration histogram of a destination', () => {
  it('When durations are bucketed, then each lands in the first bucket whose bound holds it, and over 10 s in the last', () => {
    expect([0, 5, 6, 10, 11, 999, 1000, 1001, 10_000, 10_001, 600_000].map(baldeDaDuracao)).toEqual([
      0, 0, 1, 1, 2, 7, 7, 8, 10, 11, 11,
    ]);
  });

  it('When durations are added, then the histogram has one more in their bucket and keeps its size', () => {
    let baldes = somarDuracao([], 3);
    baldes = somarDuracao(baldes, 4);
    baldes = somarDuracao(baldes, 40);
    expect(baldes).toHaveLength(BALDES_DE_DURACAO);
    expect(baldes.slice(0, 4)).toEqual([2, 0, 0, 1]);
  });

  it('When percentiles are read, then they are the bound of the bucket the rank falls in', () => {
    const baldes = new Array(BALDES_DE_DURACAO).fill(0);
    baldes[1] = 98; // ≤ 10 ms
    baldes[6] = 1; // ≤ 500 ms
    baldes[11] = 1; // over 10 s
    expect(percentil(baldes, 0.5)).toBe(10);
    expect(percentil(baldes, 0.99)).toBe(500);
    expect(percentil(baldes, 1)).toBe(10_000);
    expect(percentil(new Array(BALDES_DE_DURACAO).fill(0), 0.5)).toBeNull();
  });
});

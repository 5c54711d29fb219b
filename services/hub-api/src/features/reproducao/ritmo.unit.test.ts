import { eventosPorLote } from './ritmo';

describe('eventosPorLote', () => {
  test('When a rate is set, then a batch is what one pause allows at that rate, at most lote and at least 1', () => {
    expect(eventosPorLote({ lote: 500, porSegundo: 200, pausaMs: 200 })).toBe(40);
    expect(eventosPorLote({ lote: 30, porSegundo: 200, pausaMs: 400 })).toBe(30);
    expect(eventosPorLote({ lote: 500, porSegundo: 1, pausaMs: 100 })).toBe(1);
    expect(eventosPorLote({ lote: 500, porSegundo: 3, pausaMs: 500 })).toBe(2);
  });

  test('When the rate is 0 or there is no pause, then only lote bounds a batch', () => {
    expect(eventosPorLote({ lote: 500, porSegundo: 0, pausaMs: 200 })).toBe(500);
    expect(eventosPorLote({ lote: 500, porSegundo: 200, pausaMs: 0 })).toBe(500);
  });
});

import { FigurasDosDestinos } from './figuras';

describe('destination figures', () => {
  test('When attempts are counted, then each origin and minute gets its tries, failures and duration buckets', async () => {
    const gravarFiguras = jest.fn(async () => undefined);
    const f = new FigurasDosDestinos({ gravarFiguras });
    f.anotar('https://a.example', true, 4, new Date('2026-12-02T10:00:10Z'));
    f.anotar('https://a.example', false, 20_000, new Date('2026-12-02T10:00:50Z'));
    await f.gravar();
    expect(gravarFiguras).toHaveBeenCalledWith([
      {
        origem: 'https://a.example',
        minuto: '2026-12-02T10:00:00.000Z',
        tentativas: 2,
        falhas: 1,
        duracoes: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
      },
    ]);
    await f.gravar();
    expect(gravarFiguras).toHaveBeenCalledTimes(1);
  });

  test('When a write fails, then its counts are kept and added to those that came meanwhile', async () => {
    const gravarFiguras = jest.fn<Promise<undefined>, [unknown]>(async () => undefined);
    gravarFiguras.mockRejectedValueOnce(new Error('down'));
    const f = new FigurasDosDestinos({ gravarFiguras });
    const minuto = new Date('2026-12-02T10:00:10Z');
    f.anotar('https://a.example', false, 30, minuto);
    await expect(f.gravar()).rejects.toThrow('down');
    f.anotar('https://a.example', true, 30, minuto);
    await f.gravar();
    expect(gravarFiguras.mock.calls[1]![0]).toEqual([
      expect.objectContaining({ tentativas: 2, falhas: 1, duracoes: [0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0] }),
    ]);
  });
});

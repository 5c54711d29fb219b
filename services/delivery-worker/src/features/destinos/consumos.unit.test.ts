import { isolatedDeliveryTopology } from '@hub/contracts';
import { createLogger } from '@hub/log';
import { ConsumosDosDestinos } from './consumos';
import type { Regras } from './destinos';
import type { Isolada } from './isolamento.repository';

const LIVRE: Regras = { concorrencia: 4, porSegundo: null, pausado: false, circuito: 'fechado', sondaDevida: false };
const isolada = (extra: Partial<Isolada> = {}): Isolada => ({
  id: 'd1',
  origem: 'https://lento.example',
  estado: 'isolada',
  parada: false,
  removivel: false,
  assentada: false,
  ...extra,
});

function consumos(regras: { atual: Regras }, linha: { atual: Isolada | undefined }) {
  const canceladas: number[] = [];
  let n = 0;
  const broker = {
    consume: jest.fn(async (_fila: string, _h: unknown, opcoes: { prefetch?: number }) => {
      n += 1;
      const id = n;
      return { cancel: jest.fn(async () => void canceladas.push(id)), prefetch: opcoes.prefetch };
    }),
  };
  const c = new ConsumosDosDestinos({
    broker: broker as never,
    topologia: isolatedDeliveryTopology('unidade'),
    destinos: { regras: () => regras.atual },
    logger: createLogger('consumos-unidade', 'silent'),
    processar: async () => undefined,
    retry: { delaysMs: [1_000], maxAttempts: 3 },
    isUnavailable: () => false,
    isolada: () => linha.atual,
    parado: () => false,
  });
  return { c, broker, canceladas };
}

describe('consumers of the isolated destinations', () => {
  test('When a destination is isolated and free, then its queue is consumed with its share as prefetch, retried through the shared queue', async () => {
    const linha = { atual: isolada() as Isolada | undefined };
    const { c, broker } = consumos({ atual: LIVRE }, linha);
    await c.ajustar(linha.atual!);
    expect(broker.consume).toHaveBeenCalledWith(
      'unidade.delivery-worker.destino.d1',
      expect.any(Function),
      expect.objectContaining({ prefetch: 4, retryQueue: 'unidade.delivery-worker.entregas.v2' }),
    );
  });

  test('When the destination is held, then nothing consumes its queue (its backlog sits still)', async () => {
    const regras = { atual: LIVRE };
    const linha = { atual: isolada() as Isolada | undefined };
    const { c, broker, canceladas } = consumos(regras, linha);
    await c.ajustar(linha.atual!);
    regras.atual = { ...LIVRE, pausado: true };
    await c.ajustar(linha.atual!);
    expect(canceladas).toEqual([1]);
    await c.ajustar(linha.atual!);
    expect(broker.consume).toHaveBeenCalledTimes(1);
  });

  test('When the circuit is half-open, then the queue is consumed one job at a time (the probe), and at its share once closed', async () => {
    const regras: { atual: Regras } = { atual: { ...LIVRE, circuito: 'meio_aberto', sondaDevida: true } };
    const linha = { atual: isolada() as Isolada | undefined };
    const { c, broker, canceladas } = consumos(regras, linha);
    await c.ajustar(linha.atual!);
    regras.atual = LIVRE;
    await c.ajustar(linha.atual!);
    expect(broker.consume.mock.calls.map((call) => call[2].prefetch)).toEqual([1, 4]);
    expect(canceladas).toEqual([1]);
  });

  test('When the destination is on its way back past the grace, or its row is gone, then its consumer stops', async () => {
    const linha = { atual: isolada() as Isolada | undefined };
    const { c, canceladas } = consumos({ atual: LIVRE }, linha);
    await c.ajustar(linha.atual!);
    linha.atual = isolada({ estado: 'saindo', parada: true });
    await c.ajustar(linha.atual);
    expect(canceladas).toEqual([1]);
    linha.atual = isolada();
    await c.ajustar(linha.atual);
    linha.atual = undefined;
    await c.esquecerOutras(() => false);
    expect(canceladas).toEqual([1, 2]);
  });
});

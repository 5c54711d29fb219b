import { isolatedDeliveryTopology } from '@hub/contracts';
import { createLogger } from '@hub/log';
import { criarMetricas } from '../../metricas';
import type { Isolada } from './isolamento.repository';
import { RetornoAoCompartilhado } from './retorno';

const isolada = (extra: Partial<Isolada> = {}): Isolada => ({
  id: 'd1',
  origem: 'https://lento.example',
  estado: 'isolada',
  parada: false,
  removivel: false,
  assentada: true,
  ...extra,
});

function retorno(opcoes: { consumidores?: number; mensagens?: number; tomadas?: number } = {}) {
  let agora = Date.parse('2026-12-02T10:00:00Z');
  const restantes = Array.from({ length: opcoes.mensagens ?? 0 }, (_, i) => ({
    content: Buffer.from(`{"n":${i}}`),
    properties: { messageId: `m${i}`, headers: { 'x-death': [{}], 'hub-tentativa': 1 } },
  }));
  const canal = {
    unbindQueue: jest.fn(async () => undefined),
    deleteQueue: jest.fn(async () => undefined),
    get: jest.fn(async () => restantes.shift() ?? false),
    ack: jest.fn(),
  };
  const publicados: { routingKey: string; options: { headers?: Record<string, unknown> } }[] = [];
  const broker = {
    checkQueue: jest.fn(async () => ({ consumerCount: opcoes.consumidores ?? 0, messageCount: 0 })),
    withChannel: jest.fn(async (f: (ch: typeof canal) => Promise<unknown>) => f(canal)),
    publish: jest.fn(async (_e: string, routingKey: string, _c: Buffer, options: object) => {
      publicados.push({ routingKey, options });
    }),
    forgetQueue: jest.fn(),
  };
  const repo = {
    sair: jest.fn(async () => 1),
    tomarRemocao: jest.fn(async () => opcoes.tomadas ?? 1),
    concluirRemocao: jest.fn(async () => undefined),
  };
  const aoRemover = jest.fn();
  const metricas = criarMetricas();
  const r = new RetornoAoCompartilhado({
    repo,
    broker: broker as never,
    topologia: isolatedDeliveryTopology('unidade'),
    logger: createLogger('retorno-unidade', 'silent'),
    metricas,
    relogio: { agora: () => agora },
    quietudeMs: 60_000,
    aoRemover,
  });
  return { r, repo, canal, broker, publicados, aoRemover, avancar: (ms: number) => (agora += ms) };
}

describe('a destination going back to the shared queue', () => {
  test('When its queue stays empty for the quiet period, then it starts going back; not before', async () => {
    const { r, repo, avancar } = retorno();
    const i = isolada();
    await r.talvezSair(i);
    avancar(59_999);
    await r.talvezSair(i);
    expect(repo.sair).not.toHaveBeenCalled();
    avancar(1);
    await r.talvezSair(i);
    expect(repo.sair).toHaveBeenCalledWith('d1');
    expect(i.estado).toBe('saindo');
  });

  test('When its queue fills again during the quiet period, then the period starts over', async () => {
    const { r, repo, avancar } = retorno();
    const i = isolada();
    await r.talvezSair(i);
    avancar(50_000);
    r.ocupada(i);
    await r.talvezSair(i);
    avancar(50_000);
    await r.talvezSair(i);
    expect(repo.sair).not.toHaveBeenCalled();
  });

  test('When another worker still consumes its queue, then it is not removed yet', async () => {
    const { r, repo } = retorno({ consumidores: 1 });
    await r.remover(isolada({ estado: 'saindo', removivel: true }));
    expect(repo.tomarRemocao).not.toHaveBeenCalled();
  });

  test('When another worker took the removal, then this one does nothing', async () => {
    const { r, canal, aoRemover } = retorno({ tomadas: 0 });
    await r.remover(isolada({ estado: 'saindo', removivel: true }));
    expect(canal.unbindQueue).not.toHaveBeenCalled();
    expect(aoRemover).not.toHaveBeenCalled();
  });

  test('When it takes the removal, then it unbinds, moves what is left to the shared queue, deletes the queue and the row says shared', async () => {
    const { r, canal, publicados, repo, aoRemover } = retorno({ mensagens: 2 });
    const i = isolada({ estado: 'saindo', removivel: true });
    await r.remover(i);
    expect(canal.unbindQueue).toHaveBeenCalledWith(
      'unidade.delivery-worker.destino.d1',
      expect.any(String),
      'destino.d1',
    );
    expect(publicados.map((p) => p.routingKey)).toEqual(['entrega.tentar', 'entrega.tentar']);
    // without RabbitMQ's dead-lettering history, with the job's own headers
    expect(publicados[0]!.options.headers).toEqual({ 'hub-tentativa': 1 });
    expect(canal.ack).toHaveBeenCalledTimes(2);
    expect(canal.deleteQueue).toHaveBeenCalledWith('unidade.delivery-worker.destino.d1');
    expect(repo.concluirRemocao).toHaveBeenCalledWith('d1');
    expect(aoRemover).toHaveBeenCalledWith(i);
  });
});

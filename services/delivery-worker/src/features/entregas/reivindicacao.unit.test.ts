import { EtapaDeReivindicacao } from './reivindicacao';
import { contado, recursosFalsos, reivindicada, repoFalso, trabalho } from './etapas.test-support';

function etapa(repo = repoFalso()) {
  const { recursos } = recursosFalsos({ repo });
  const vez = { passar: jest.fn(() => undefined) };
  return { etapa: new EtapaDeReivindicacao({ recursos, vez }), repo, vez, metricas: recursos.metricas };
}

describe('take and claim', () => {
  test('When two jobs of one delivery are claimed together, then one statement claims it once and the second job is dropped', async () => {
    const t = trabalho();
    const repo = repoFalso({ reivindicar: jest.fn(async () => [reivindicada(t)]) });
    const { etapa: e, metricas } = etapa(repo);
    const [primeiro, segundo] = await Promise.all([e.reivindicar(t, null), e.reivindicar(t, null)]);
    expect(repo.reivindicar).toHaveBeenCalledTimes(1);
    expect(repo.reivindicar.mock.calls[0][0]).toHaveLength(1);
    // the last job asked is the one the statement carries: the other is the copy
    expect(primeiro).toEqual({ tipo: 'descartada' });
    expect(segundo).toEqual(expect.objectContaining({ tipo: 'reivindicada', token: expect.any(String) }));
    expect(await contado(metricas.trabalhos, { desfecho: 'descartado' })).toBe(1);
  });

  test('When the statement returns no row (final, not due, or held by another live claim), then the job is dropped', async () => {
    const { etapa: e, metricas, vez } = etapa();
    expect(await e.reivindicar(trabalho(), null)).toEqual({ tipo: 'descartada' });
    expect(await contado(metricas.trabalhos, { desfecho: 'descartado' })).toBe(1);
    expect(vez.passar).not.toHaveBeenCalled();
  });

  test('When the job carries the token of an earlier claim, then the claim asks to continue it under a new token', async () => {
    const t = trabalho();
    const repo = repoFalso({ reivindicar: jest.fn(async () => [reivindicada(t)]) });
    const { etapa: e } = etapa(repo);
    const anterior = '0192f0c8-0000-7000-8000-000000000001';
    const r = await e.reivindicar(t, anterior);
    const [[pedidos]] = repo.reivindicar.mock.calls;
    expect(pedidos).toEqual([{ id: t.entrega_id, token: expect.any(String), anterior }]);
    expect(r.tipo === 'reivindicada' && r.token).toBe(pedidos[0].token);
    expect(pedidos[0].token).not.toBe(anterior);
  });

  test('When the claim finds the subscription off, then the delivery is cancelled, counted, and its entity turn passes', async () => {
    const t = trabalho();
    const linha = reivindicada(t, { situacao: 'cancelada', sequencia: '3' });
    const { etapa: e, metricas, vez } = etapa(repoFalso({ reivindicar: jest.fn(async () => [linha]) }));
    expect(await e.reivindicar(t, null)).toEqual({ tipo: 'cancelada', linha });
    expect(vez.passar).toHaveBeenCalledWith([linha]);
    expect(await contado(metricas.trabalhos, { desfecho: 'cancelado' })).toBe(1);
    expect(await contado(metricas.situacoes, { situacao: 'cancelada' })).toBe(1);
  });

  test('When the claim finds a poison job, then it says so (for the error queue) and passes the turn', async () => {
    const t = trabalho();
    const linha = reivindicada(t, { situacao: 'fila_de_erro', ultimo_erro: 'poison job: its last 3 claims ended' });
    const { etapa: e, vez } = etapa(repoFalso({ reivindicar: jest.fn(async () => [linha]) }));
    expect(await e.reivindicar(t, null)).toEqual({ tipo: 'envenenada', linha });
    expect(vez.passar).toHaveBeenCalledWith([linha]);
  });

  test('When claims are given back together, then one statement releases them all', async () => {
    const { etapa: e, repo } = etapa();
    await Promise.all([e.devolver('a', 'ta'), e.devolver('b', 'tb')]);
    expect(repo.liberar).toHaveBeenCalledTimes(1);
    expect(repo.liberar).toHaveBeenCalledWith([
      { id: 'a', token: 'ta' },
      { id: 'b', token: 'tb' },
    ]);
  });

  test('When a claim cannot be released at the stop, then the failure is swallowed (its lease ends it)', async () => {
    const { etapa: e, repo } = etapa(repoFalso({ liberar: jest.fn(async () => Promise.reject(new Error('down'))) }));
    await expect(e.liberar(trabalho(), 'token')).resolves.toBeUndefined();
    expect(repo.liberar).toHaveBeenCalledTimes(1);
  });
});

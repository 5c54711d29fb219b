import type { Registrada } from './linhas';
import { contado, recursosFalsos, reivindicada, repoFalso, resultado, trabalho } from './etapas.test-support';
import { EtapaDeRegistro, registroDaTentativa } from './registro';
import type { Posse } from './trabalho';

const ASSINATURA = {
  'webhook-id': 'msg',
  'webhook-timestamp': '1',
  'webhook-signature': 'v1a,x',
  'webhook-key-id': 'k',
};

function etapa(responde: (ids: string[]) => Partial<Registrada>[] = () => []) {
  const repo = repoFalso({
    registrar: jest.fn(async (rows: { entrega_id: string }[]) =>
      responde(rows.map((r) => r.entrega_id)).map((r) => ({
        sequencia: null,
        assinatura_id: 'a',
        entidade_id: 'e',
        ...r,
      })),
    ),
  });
  const { recursos } = recursosFalsos({ repo });
  const vez = { passar: jest.fn(() => undefined) };
  return { e: new EtapaDeRegistro({ recursos, vez }), repo, vez, metricas: recursos.metricas };
}

describe('record', () => {
  test('When an attempt failed, then its row carries its next due time (its expiry) and the end of its step', () => {
    const r = resultado({ statusHttp: 503, duracaoMs: 100 });
    const fim = r.iniciadaEm.getTime() + 100;
    const linha = registroDaTentativa(trabalho(), r, ASSINATURA, { passoMs: 30_000, expiracaoMs: 25_000 });
    expect(linha.proxima_tentativa_em).toEqual(new Date(fim + 25_000));
    expect(linha.retorno_ate).toEqual(new Date(fim + 30_000));
    expect(linha.encerrar).toBe(false);
    expect(linha.erro).toBe('HTTP 503');
  });

  test('When the destination answers 410, then the row ends the subscription and says so in its error', () => {
    const linha = registroDaTentativa(trabalho(), resultado({ statusHttp: 410 }), ASSINATURA, undefined);
    expect(linha.encerrar).toBe(true);
    expect(linha.erro).toBe('HTTP 410 (410 Gone: the subscription is switched off)');
  });

  test('When an attempt succeeded, then its row has no due dates and its signature headers', () => {
    const t = trabalho();
    const linha = registroDaTentativa(t, resultado(), ASSINATURA, undefined);
    expect(linha).toMatchObject({
      entrega_id: t.entrega_id,
      sucesso: true,
      proxima_tentativa_em: null,
      retorno_ate: null,
    });
    expect(linha.cabecalhos).toBe(ASSINATURA);
  });

  test('When attempts end together, then one statement records them and each gets its own row back', async () => {
    const { e, repo } = etapa((ids) => ids.map((id) => ({ id, situacao: 'concluida', tentativas_no_ciclo_atual: 1 })));
    const [a, b] = [trabalho(), trabalho()];
    const enviado = { resultado: resultado(), cabecalhos: ASSINATURA };
    const [ra, rb] = await Promise.all([
      e.registrar(a, reivindicada(a), enviado, undefined, {}),
      e.registrar(b, reivindicada(b), enviado, undefined, {}),
    ]);
    expect(repo.registrar).toHaveBeenCalledTimes(1);
    expect(ra?.id).toBe(a.entrega_id);
    expect(rb?.id).toBe(b.entrega_id);
  });

  test('When another attempt had finished the delivery, then nothing is counted and the claim is over anyway', async () => {
    const { e, metricas, vez } = etapa(() => []);
    const t = trabalho();
    const posse: Posse = { token: 'tk' };
    const r = await e.registrar(
      t,
      reivindicada(t),
      { resultado: resultado(), cabecalhos: ASSINATURA },
      undefined,
      posse,
    );
    expect(r).toBeUndefined();
    expect(posse.token).toBeUndefined();
    expect(vez.passar).not.toHaveBeenCalled();
    expect(await contado(metricas.situacoes, { situacao: 'concluida' })).toBe(0);
  });

  test('When the record makes an ordered delivery final, then its entity turn passes; a retry does not pass it', async () => {
    const situacoes: Registrada['situacao'][] = ['fila_de_erro', 'aguardando_nova_tentativa'];
    const { e, vez, metricas } = etapa((ids) =>
      ids.map((id) => ({ id, situacao: situacoes.shift()!, tentativas_no_ciclo_atual: 5, sequencia: '7' })),
    );
    const t = trabalho();
    const enviado = { resultado: resultado({ statusHttp: 500 }), cabecalhos: ASSINATURA };
    const final = await e.registrar(t, reivindicada(t, { sequencia: '7' }), enviado, undefined, {});
    expect(vez.passar).toHaveBeenCalledWith([final]);
    await e.registrar(t, reivindicada(t, { sequencia: '7' }), enviado, undefined, {});
    expect(vez.passar).toHaveBeenCalledTimes(1);
    expect(await contado(metricas.situacoes, { situacao: 'fila_de_erro' })).toBe(1);
    expect(await contado(metricas.situacoes, { situacao: 'aguardando_nova_tentativa' })).toBe(1);
  });

  test('When records are spaced, then an ordered delivery record does not wait for the spacing', async () => {
    const repo = repoFalso({
      registrar: jest.fn(async (rows: { entrega_id: string }[]) =>
        rows.map((r) => ({ id: r.entrega_id, situacao: 'concluida', tentativas_no_ciclo_atual: 1, sequencia: null })),
      ),
    });
    const { recursos } = recursosFalsos({ repo, config: { espacamentoDosRegistrosMs: 60_000 } });
    const e = new EtapaDeRegistro({ recursos, vez: { passar: () => undefined } });
    const enviado = { resultado: resultado(), cabecalhos: ASSINATURA };
    const [a, b] = [trabalho(), trabalho()];
    await e.registrar(a, reivindicada(a), enviado, undefined, {});
    const inicio = Date.now();
    await e.registrar(b, reivindicada(b, { sequencia: '1' }), enviado, undefined, {});
    expect(Date.now() - inicio).toBeLessThan(10_000);
    expect(repo.registrar).toHaveBeenCalledTimes(2);
  });
});

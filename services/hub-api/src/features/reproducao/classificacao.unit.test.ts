import { compilarFiltro } from '../assinaturas/filtro';
import type { Situacao } from '../eventos/eventos.schemas';
import { type AssinaturaDoLote, classificar, corpoParaFiltro, type EventoDoLote } from './classificacao';

const recebido = new Date('2024-01-01T00:00:00.000Z');
const evento = (id: string, entrega: Situacao | null, dados: unknown = { valor: 1 }): EventoDoLote => ({
  id,
  entidadeId: 'p-1',
  ocorridoEm: recebido,
  recebidoEm: recebido,
  aplicativoPublicadorId: 'app',
  teste: false,
  dados: JSON.stringify(dados),
  entrega: entrega === null ? null : { id: `entrega-${id}`, situacao: entrega },
});
const assinatura = (extra: Partial<AssinaturaDoLote> = {}): AssinaturaDoLote => ({
  id: 'assinatura',
  tipoNome: 'pedido.criado',
  versaoDoEsquema: 1,
  incluirEntregues: false,
  filtro: null,
  ...extra,
});

describe('classificar', () => {
  test('When an event has no delivery, then it is created; one with a delivery is ignored', () => {
    const r = classificar([evento('a', null), evento('b', 'concluida'), evento('c', 'fila_de_erro')], assinatura());
    expect(r).toEqual({ criar: [evento('a', null)], reenviar: [], ignoradas: 2 });
  });

  test('When incluir_entregues, then a delivery whose cycle is over is resent; one still in the queue is ignored', () => {
    const situacoes: Situacao[] = [
      'concluida',
      'fila_de_erro',
      'cancelada',
      'pendente',
      'em_andamento',
      'aguardando_nova_tentativa',
    ];
    const r = classificar(
      situacoes.map((s, i) => evento(String(i), s)),
      assinatura({ incluirEntregues: true }),
    );
    expect(r).toEqual({ criar: [], reenviar: ['entrega-0', 'entrega-1', 'entrega-2'], ignoradas: 3 });
  });

  test('When the subscription has a filter, then an event it does not take is ignored, whatever its delivery', () => {
    const filtro = compilarFiltro({ 'dados.valor': { $gte: 100 } });
    const r = classificar(
      [evento('a', null, { valor: 5 }), evento('b', null, { valor: 500 }), evento('c', 'concluida', { valor: 1 })],
      assinatura({ filtro, incluirEntregues: true }),
    );
    expect(r.criar.map((e) => e.id)).toEqual(['b']);
    expect([r.reenviar, r.ignoradas]).toEqual([[], 2]);
  });

  test('When the filter names the envelope, then it sees the body publication builds: assinatura_id, tipo, teste only when true', () => {
    const a = assinatura();
    expect(corpoParaFiltro({ ...evento('a', null), teste: true }, a)).toEqual({
      id: 'a',
      tipo: 'pedido.criado',
      versao_do_esquema: 1,
      entidade_id: 'p-1',
      ocorrido_em: '2024-01-01T00:00:00.000Z',
      recebido_em: '2024-01-01T00:00:00.000Z',
      aplicativo_publicador_id: 'app',
      assinatura_id: 'assinatura',
      teste: true,
      dados: { valor: 1 },
    });
    expect('teste' in corpoParaFiltro(evento('a', null), a)).toBe(false);
    const soTestes = compilarFiltro({ teste: true });
    expect(
      classificar(
        [{ ...evento('a', null), teste: true }, evento('b', null)],
        assinatura({ filtro: soTestes }),
      ).criar.map((e) => e.id),
    ).toEqual(['a']);
  });
});

import { compilarFiltro } from '../assinaturas/filtro';
import type { EventoCriar } from '../eventos/eventos.schemas';
import { type AlvoDaPublicacao, montarGravacao } from './gravacao';

// The filters of one publication, evaluated over one body: how often an object of it is counted.

/** An object of the body whose key listings are counted. */
function contado(alvo: Record<string, unknown>) {
  const contagem = { listagens: 0 };
  const proxy = new Proxy(alvo, {
    ownKeys(t) {
      contagem.listagens += 1;
      return Reflect.ownKeys(t);
    },
  });
  return { proxy, contagem };
}

const assinatura = (i: number, filtro: unknown): AlvoDaPublicacao['assinaturas'][number] => ({
  id: `0193a1b2-0000-7000-8000-${String(i).padStart(12, '0')}`,
  aplicativoAssinanteId: '0193a1b2-0000-7000-8000-aaaaaaaaaaaa',
  urlDeDestino: `https://receptor.example.com/${i}`,
  maximoDeTentativas: 5,
  entregaOrdenada: false,
  aplicativoAssinante: { nome: 'ERP' },
  filtro: compilarFiltro(filtro),
});

function publicar(assinaturas: AlvoDaPublicacao['assinaturas'], dados: Record<string, unknown>) {
  const alvo: AlvoDaPublicacao = {
    tipo: {
      id: '0193a1b2-0000-7000-8000-bbbbbbbbbbbb',
      nome: 'pedido.criado',
      aplicativoId: 'loja',
      aplicativo: { nome: 'Loja' },
    },
    versao: { versao: 1 },
    assinaturas,
  };
  const corpo = { tipo_de_evento_id: alvo.tipo.id, versao_do_esquema: 1, entidade_id: 'p-1', dados } as EventoCriar;
  return montarGravacao(alvo, {
    corpo,
    // The delivered text: the filters never read it (JSON.stringify would list the counted object's keys).
    dadosTexto: '{}',
    publicadoPeloEmail: null,
    requestId: null,
    recebidoEm: new Date('2026-12-01T12:00:00.000Z'),
  });
}

describe('the filters of a publication', () => {
  test('When 60 subscriptions compare object literals with one large object of the body, then its keys are listed once for the publication, not once per subscription', () => {
    const grande = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    const { proxy, contagem } = contado(grande);
    const assinaturas = Array.from({ length: 60 }, (_, i) =>
      assinatura(i, i % 2 === 0 ? { 'dados.o': { $in: [{ a: 1 }, {}] } } : { $not: { 'dados.o': { b: 2 } } }),
    );
    const gravacao = publicar(assinaturas, { o: proxy });
    expect(contagem.listagens).toBe(1);
    // The same deliveries as one evaluation per subscription: the odd ones ($not of an unequal literal).
    expect(gravacao.entregas.map((e) => e.assinaturaId)).toEqual(
      assinaturas.filter((_, i) => i % 2 === 1).map((a) => a.id),
    );
  });

  test('When each filter names its own subscription, then each is evaluated with its assinatura_id, and counts end with the publication', () => {
    const assinaturas = Array.from({ length: 3 }, (_, i) => assinatura(i, null));
    const alvo = assinaturas.map((a, i) => ({
      ...a,
      filtro: i === 1 ? compilarFiltro({ assinatura_id: a.id }) : a.filtro,
    }));
    expect(publicar(alvo, { x: 1 }).entregas.map((e) => e.assinaturaId)).toEqual(alvo.map((a) => a.id));
    // Outside a publication, a predicate is its own evaluation: a changed object is counted again.
    const predicado = compilarFiltro({ 'dados.o': { a: 1 } })!;
    const o: Record<string, number> = { a: 1 };
    expect(predicado({ dados: { o } })).toBe(true);
    o.b = 2;
    expect(predicado({ dados: { o } })).toBe(false);
  });
});

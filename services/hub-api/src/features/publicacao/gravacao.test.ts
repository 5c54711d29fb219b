import { trabalhoDeEntrega } from '@hub/contracts';
import { compilarFiltro } from '../assinaturas/filtro';
import { type AlvoDaPublicacao, montarGravacao } from './gravacao';
import { jsonDoDetalhado, respostaDaPublicacao } from './resposta';

const alvo: AlvoDaPublicacao = {
  tipo: {
    id: '0190a000-0000-7000-8000-000000000001',
    nome: 'pedido.criado',
    aplicativoId: '0190a000-0000-7000-8000-0000000000a1',
    aplicativo: { nome: 'Loja' },
  },
  versao: { versao: 2 },
  assinaturas: ['b', 'a'].map((s) => ({
    id: `0190a000-0000-7000-8000-00000000000${s}`,
    aplicativoAssinanteId: `0190a000-0000-7000-8000-0000000000${s}${s}`,
    urlDeDestino: `https://${s}.example/webhook`,
    maximoDeTentativas: 5,
    entregaOrdenada: false,
    aplicativoAssinante: { nome: `Assinante ${s}` },
    filtro: null,
  })),
};
const recebidoEm = new Date('2031-05-06T10:08:09.123Z');
// dados as written: a 20-digit integer a parse would round.
const dadosTexto = '{"numero": "A-1", "valor": 12345678901234567890}';
const pedido = {
  corpo: {
    tipo_de_evento_id: alvo.tipo.id,
    versao_do_esquema: 2,
    entidade_id: 'pedido-1',
    dados: JSON.parse(dadosTexto),
    ocorrido_em: '2031-05-06T07:00:00-03:00',
  },
  dadosTexto,
  publicadoPeloEmail: null,
  requestId: 'req-1',
  recebidoEm,
};

describe('the group write and the answer of a publication (pure)', () => {
  test('When a publication is built for two subscriptions, then each gets a delivery and a job with its own body, dados verbatim', () => {
    const g = montarGravacao(alvo, pedido);
    expect(g.evento).toMatchObject({
      tipoDeEventoId: alvo.tipo.id,
      versaoDoEsquema: 2,
      aplicativoPublicadorId: alvo.tipo.aplicativoId,
      ocorridoEm: new Date('2031-05-06T10:00:00Z'),
      recebidoEm,
      publicadoPeloEmail: null,
      dadosTexto,
    });
    expect(g.chave).toBeUndefined();
    expect(g.entregas.map((e) => [e.assinaturaId, e.eventoId, e.urlDeDestino])).toEqual(
      alvo.assinaturas.map((a) => [a.id, g.evento.id, a.urlDeDestino]),
    );
    for (const [i, t] of g.trabalhos.entries()) {
      const corpo = trabalhoDeEntrega.schema.parse(t.body);
      expect(t.messageId).toBe(g.entregas[i]!.id);
      expect(corpo).toMatchObject({ entrega_id: t.messageId, evento_id: g.evento.id, request_id: 'req-1' });
      expect(corpo.corpo).toContain(`"assinatura_id":"${alvo.assinaturas[i]!.id}"`);
      expect(corpo.corpo).toContain(`"dados":${dadosTexto}`);
      expect(corpo.corpo).not.toContain('"teste"');
    }
  });

  test("When a panel user publishes with a key, then the event names the e-mail, claims the key, and the body says it's a test", () => {
    const chave = { escopo: 'usuario:ana@example.com', chave: 'k', impressao: 'abc' };
    const g = montarGravacao(alvo, { ...pedido, publicadoPeloEmail: 'ana@example.com', chave });
    expect(g.evento.publicadoPeloEmail).toBe('ana@example.com');
    expect(g.chave).toEqual(chave);
    expect(trabalhoDeEntrega.schema.parse(g.trabalhos[0]!.body).corpo).toContain('"teste":true');
  });

  test('When the answer is built, then it is what was written: every delivery pendente, in id order, dados spliced verbatim', () => {
    const g = montarGravacao(alvo, pedido);
    const resposta = respostaDaPublicacao(alvo, g);
    expect(resposta.evento).toMatchObject({
      id: g.evento.id,
      tipo_de_evento_nome: 'pedido.criado',
      aplicativo_publicador_nome: 'Loja',
      ocorrido_em: '2031-05-06T10:00:00.000Z',
      recebido_em: '2031-05-06T10:08:09.123Z',
      quantidade_de_entregas: 2,
      entregas_na_fila: 2,
    });
    const ids = resposta.entregas.map((e) => e.id);
    expect(ids).toEqual([...ids].sort());
    expect(resposta.entregas.map((e) => e.situacao)).toEqual(['pendente', 'pendente']);
    const porAssinatura = new Map(resposta.entregas.map((e) => [e.assinatura_id, e]));
    for (const [i, a] of alvo.assinaturas.entries())
      expect(porAssinatura.get(a.id)).toMatchObject({
        id: g.entregas[i]!.id,
        aplicativo_assinante_nome: a.aplicativoAssinante.nome,
        url_de_destino: a.urlDeDestino,
      });
    expect(jsonDoDetalhado(resposta)).toContain(`"dados":${dadosTexto},"entregas":[`);
  });

  test('When subscriptions have filters, then only those whose filter matches the delivery body get a delivery, a job and a place in the answer', () => {
    const vistos: unknown[] = [];
    const [b, a] = alvo.assinaturas;
    const comFiltros: AlvoDaPublicacao = {
      ...alvo,
      assinaturas: [
        { ...b!, filtro: compilarFiltro({ 'dados.numero': 'A-1', tipo: 'pedido.criado', teste: true }) },
        {
          ...a!,
          filtro: (corpo) => {
            vistos.push(structuredClone(corpo));
            return false;
          },
        },
        { ...a!, id: '0190a000-0000-7000-8000-00000000000c', filtro: compilarFiltro({ 'dados.numero': 'B-9' }) },
      ],
    };
    const g = montarGravacao(comFiltros, { ...pedido, publicadoPeloEmail: 'ana@example.com' });
    expect(g.entregas.map((e) => e.assinaturaId)).toEqual([b!.id]);
    expect(g.trabalhos.map((t) => trabalhoDeEntrega.schema.parse(t.body).assinatura_id)).toEqual([b!.id]);
    const resposta = respostaDaPublicacao(comFiltros, g);
    expect(resposta.entregas.map((e) => [e.id, e.assinatura_id, e.url_de_destino])).toEqual([
      [g.entregas[0]!.id, b!.id, b!.urlDeDestino],
    ]);
    expect(resposta.evento.quantidade_de_entregas).toBe(1);
    // The filter saw the delivery body (its own assinatura_id, dados as parsed), as the subscriber would receive it.
    const entregue = JSON.parse(trabalhoDeEntrega.schema.parse(g.trabalhos[0]!.body).corpo);
    expect(vistos).toEqual([{ ...entregue, assinatura_id: a!.id, dados: pedido.corpo.dados }]);
  });

  test('When no subscription has a filter, then every one gets a delivery', () => {
    const g = montarGravacao(alvo, pedido);
    expect(g.entregas).toHaveLength(alvo.assinaturas.length);
  });
});

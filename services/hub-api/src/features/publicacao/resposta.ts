import { iso } from '../../schemas';
import {
  type EntregaDoPublicadorDto,
  type EntregaDto,
  type EventoDto,
  entregaDoPublicador,
} from '../eventos/eventos.schemas';
import type { AlvoDaPublicacao, Gravacao } from './gravacao';

/** EventoDetalhado split in two: dados stays the stored JSON text, never parsed into a JS value. */
export interface EventoDetalhadoTexto<E = EntregaDto> {
  evento: EventoDto;
  dadosTexto: string;
  entregas: E[];
}

/**
 * The answer of an accepted publication (no I/O): what was just written, as GET /evento/{id} reads
 * it back, built here instead of read again: a new event's deliveries are all pendente, in the queue.
 * Its deliveries are the group write's (the subscriptions whose filter matched), each with its subscription.
 */
export function respostaDaPublicacao(
  { tipo, versao, assinaturas }: AlvoDaPublicacao,
  { evento, entregas }: Gravacao,
): EventoDetalhadoTexto {
  const recebidoEm = iso(evento.recebidoEm);
  const porId = new Map(assinaturas.map((a) => [a.id, a]));
  return {
    evento: {
      id: evento.id,
      tipo_de_evento_id: tipo.id,
      tipo_de_evento_nome: tipo.nome,
      versao_do_esquema: versao.versao,
      aplicativo_publicador_id: tipo.aplicativoId,
      aplicativo_publicador_nome: tipo.aplicativo.nome,
      entidade_id: evento.entidadeId,
      ocorrido_em: iso(evento.ocorridoEm),
      recebido_em: recebidoEm,
      publicado_pelo_email: evento.publicadoPeloEmail,
      quantidade_de_entregas: entregas.length,
      entregas_concluidas: 0,
      entregas_na_fila: entregas.length,
      entregas_na_fila_de_erro: 0,
    },
    dadosTexto: evento.dadosTexto,
    entregas: entregas
      .map((e): EntregaDto => {
        const a = porId.get(e.assinaturaId)!;
        return {
          id: e.id,
          evento_id: evento.id,
          evento_recebido_em: recebidoEm,
          entidade_id: evento.entidadeId,
          assinatura_id: a.id,
          aplicativo_assinante_id: a.aplicativoAssinanteId,
          aplicativo_assinante_nome: a.aplicativoAssinante.nome,
          tipo_de_evento_nome: tipo.nome,
          versao_do_esquema: versao.versao,
          url_de_destino: a.urlDeDestino,
          situacao: 'pendente',
          quantidade_de_tentativas: 0,
          tentativas_no_ciclo_atual: 0,
          maximo_de_tentativas: a.maximoDeTentativas,
          proxima_tentativa_em: recebidoEm,
          entregue_em: null,
          ultimo_erro: null,
          criada_em: recebidoEm,
          atualizada_em: recebidoEm,
          sequencia: e.sequencia ?? null,
        };
      })
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  };
}

/**
 * The JSON text of EventoDetalhado with dados spliced in verbatim: JSON.stringify of a parsed value
 * would round a 20-digit integer.
 */
export function jsonDoDetalhado({ evento, dadosTexto, entregas }: EventoDetalhadoTexto<object>): string {
  const semDados = JSON.stringify(evento);
  return `${semDados.slice(0, -1)},"dados":${dadosTexto},"entregas":${JSON.stringify(entregas)}}`;
}

/** The answer of the application routes: the same event, each delivery without its subscriber's fields. */
export const doPublicador = (detalhe: EventoDetalhadoTexto): EventoDetalhadoTexto<EntregaDoPublicadorDto> => ({
  ...detalhe,
  entregas: detalhe.entregas.map(entregaDoPublicador),
});

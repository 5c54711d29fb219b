import type { Situacao } from '../eventos/eventos.schemas';
import { numaAvaliacao, type Predicado } from '../assinaturas/filtro';

/** A stored event of a replay's batch, with the subscription's latest delivery of it (null: none). */
export interface EventoDoLote {
  id: string;
  entidadeId: string;
  ocorridoEm: Date;
  recebidoEm: Date;
  aplicativoPublicadorId: string;
  /** Published from the panel (publicado_pelo_email): its body says teste. */
  teste: boolean;
  /** dados as stored (JSON text); read only when the subscription has a filter. */
  dados: string | null;
  entrega: { id: string; situacao: Situacao } | null;
}

export interface AssinaturaDoLote {
  id: string;
  tipoNome: string;
  versaoDoEsquema: number;
  incluirEntregues: boolean;
  /** Its current content filter, compiled (null: every event). */
  filtro: Predicado | null;
}

export interface Classificacao {
  /** Events without a delivery to the subscription, in the batch's (recebido_em, id) order. */
  criar: EventoDoLote[];
  /** Deliveries that start a new cycle (incluir_entregues, their cycle over). */
  reenviar: string[];
  ignoradas: number;
}

/** A delivery whose cycle is over: a new one may start without a second job in flight. */
const FINAIS: ReadonlySet<Situacao> = new Set(['concluida', 'fila_de_erro', 'cancelada']);

/**
 * The body a subscription's filter sees for a stored event: what publication builds for it
 * (gravacao.ts, destinatarias), dados parsed from its stored text.
 */
export function corpoParaFiltro(e: EventoDoLote, a: AssinaturaDoLote): Record<string, unknown> {
  return {
    id: e.id,
    tipo: a.tipoNome,
    versao_do_esquema: a.versaoDoEsquema,
    entidade_id: e.entidadeId,
    ocorrido_em: e.ocorridoEm.toISOString(),
    recebido_em: e.recebidoEm.toISOString(),
    aplicativo_publicador_id: e.aplicativoPublicadorId,
    assinatura_id: a.id,
    ...(e.teste ? { teste: true } : {}),
    dados: e.dados === null ? null : JSON.parse(e.dados),
  };
}

/**
 * What a batch does with each event (no I/O): one the filter does not take is ignored; one without a
 * delivery gets one; one with a delivery is ignored unless incluir_entregues, and then its delivery
 * starts a new cycle if that delivery's cycle is over (one still in the queue has a job in flight: a
 * second would deliver it twice, so it is ignored too).
 */
export function classificar(eventos: readonly EventoDoLote[], a: AssinaturaDoLote): Classificacao {
  const resultado: Classificacao = { criar: [], reenviar: [], ignoradas: 0 };
  const filtro = a.filtro;
  const tomadas = filtro === null ? eventos : numaAvaliacao(() => eventos.filter((e) => filtro(corpoParaFiltro(e, a))));
  resultado.ignoradas = eventos.length - tomadas.length;
  for (const e of tomadas) {
    if (e.entrega === null) resultado.criar.push(e);
    else if (a.incluirEntregues && FINAIS.has(e.entrega.situacao)) resultado.reenviar.push(e.entrega.id);
    else resultado.ignoradas++;
  }
  return resultado;
}

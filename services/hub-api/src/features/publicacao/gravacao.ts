import { corposDaEntrega, type TrabalhoDeEntrega, trabalhoDeEntrega } from '@hub/contracts';
import { uuidv7 } from '@hub/database';
import type { OutboxMessage } from '@hub/outbox';
import { numaAvaliacao, type Predicado } from '../assinaturas/filtro';
import type { Trecho } from '@hub/tracing';
import type { EventoCriar } from '../eventos/eventos.schemas';

/** How long an Idempotency-Key answers with its first event; an older one is replaced. */
export const VALIDADE_DA_CHAVE_MS = 24 * 3_600_000;

/** The event as publication writes it. */
export interface NovoEvento {
  id: string;
  tipoDeEventoId: string;
  versaoDoEsquema: number;
  aplicativoPublicadorId: string;
  entidadeId: string;
  ocorridoEm: Date;
  recebidoEm: Date;
  publicadoPeloEmail: string | null;
  /** dados as the publisher wrote them (JSON text), stored verbatim in the json column. */
  dadosTexto: string;
}

/** A delivery as publication creates it (situacao pendente, no attempt yet). */
export interface NovaEntrega {
  id: string;
  eventoId: string;
  eventoRecebidoEm: Date;
  entidadeId: string;
  assinaturaId: string;
  aplicativoAssinanteId: string;
  tipoDeEventoId: string;
  versaoDoEsquema: number;
  urlDeDestino: string;
  maximoDeTentativas: number;
  /**
   * Its subscription keeps order per entity (docs/decisions/ordered-delivery-per-entity.md): the
   * statement gives it a sequencia, and its job is published only if it is its entity's turn.
   * Absent: unordered.
   */
  ordenada?: boolean;
  /** Set once written, for an ordered delivery: its place among its entity's deliveries. */
  sequencia?: number;
}

/** The Idempotency-Key a publication claims in its statement. */
export interface ChaveNova {
  escopo: string;
  chave: string;
  impressao: string;
}

/** What one accepted publication writes (the event, its deliveries) and the delivery jobs sent once they are committed. */
export interface Gravacao {
  evento: NovoEvento;
  entregas: NovaEntrega[];
  /**
   * One job per delivery, in the order of `entregas`. An ordered delivery's body is written once the
   * statement has given it its sequencia (`corpoPara`); a waiting one's job is not sent.
   */
  trabalhos: OutboxMessage[];
  /** The body of a delivery of this event to a subscription, with its sequencia (required when one is ordered). */
  corpoPara?: (assinaturaId: string, sequencia?: number | null) => string;
  /** Its Idempotency-Key: the event is written only if the statement claims the key. */
  chave?: ChaveNova;
  /** The publication's span (or, when nothing records, the trace context it came with). */
  trecho?: Trecho;
}

/** The type, version and subscriptions a publication was checked against (as the repositories read them). */
export interface AlvoDaPublicacao {
  tipo: { id: string; nome: string; aplicativoId: string; aplicativo: { nome: string } };
  versao: { versao: number };
  assinaturas: {
    id: string;
    aplicativoAssinanteId: string;
    urlDeDestino: string;
    maximoDeTentativas: number;
    entregaOrdenada: boolean;
    aplicativoAssinante: { nome: string };
    /** Its content filter, compiled (null: every event). */
    filtro: Predicado | null;
  }[];
}

export interface PedidoDeGravacao {
  corpo: EventoCriar;
  /** corpo.dados as the publisher wrote it (JSON text). */
  dadosTexto: string;
  /** A panel user's e-mail when the publication is a test (contract §4.3 r2); null for an application. */
  publicadoPeloEmail: string | null;
  chave?: ChaveNova;
  requestId: string | null;
  recebidoEm: Date;
  /** The publication's span: its context goes in each job's headers (docs/decisions/tracing.md). */
  trecho?: Trecho;
}

/**
 * The subscriptions whose filter matches the event (those without one included). A filter sees
 * the delivery body as the subscriber would receive it, with dados as the request's parsed value
 * (never parsed again here): built once for the event, only when some subscription has a filter,
 * its assinatura_id set for each in turn, all the filters evaluated as one evaluation.
 */
function destinatarias(
  assinaturas: AlvoDaPublicacao['assinaturas'],
  corpoDoEvento: () => Record<string, unknown>,
): AlvoDaPublicacao['assinaturas'] {
  if (assinaturas.every((a) => a.filtro === null)) return assinaturas;
  const corpo = corpoDoEvento();
  // One evaluation for every filter: an object of the body has its keys counted once per publication.
  return numaAvaliacao(() =>
    assinaturas.filter((a) => {
      if (a.filtro === null) return true;
      corpo.assinatura_id = a.id;
      return a.filtro(corpo);
    }),
  );
}

/**
 * The group write of an accepted publication (no I/O): the event, a delivery per active
 * subscription whose content filter matches, and each delivery's job, its body serialised as the
 * worker sends it.
 */
export function montarGravacao(alvo: AlvoDaPublicacao, p: PedidoDeGravacao): Gravacao {
  const { tipo, versao } = alvo;
  const { corpo, recebidoEm } = p;
  const id = uuidv7(recebidoEm.getTime());
  const ocorridoEm = corpo.ocorrido_em ? new Date(corpo.ocorrido_em) : recebidoEm;
  const teste = p.publicadoPeloEmail !== null;
  const assinaturas = destinatarias(alvo.assinaturas, () => ({
    id,
    tipo: tipo.nome,
    versao_do_esquema: versao.versao,
    entidade_id: corpo.entidade_id,
    ocorrido_em: ocorridoEm.toISOString(),
    recebido_em: recebidoEm.toISOString(),
    aplicativo_publicador_id: tipo.aplicativoId,
    assinatura_id: '',
    ...(teste ? { teste: true } : {}),
    dados: corpo.dados,
  }));
  const entregas: NovaEntrega[] = assinaturas.map((a) => ({
    id: uuidv7(recebidoEm.getTime()),
    eventoId: id,
    eventoRecebidoEm: recebidoEm,
    entidadeId: corpo.entidade_id,
    assinaturaId: a.id,
    aplicativoAssinanteId: a.aplicativoAssinanteId,
    tipoDeEventoId: tipo.id,
    versaoDoEsquema: versao.versao,
    urlDeDestino: a.urlDeDestino,
    maximoDeTentativas: a.maximoDeTentativas,
    ordenada: a.entregaOrdenada,
  }));
  // The event's part of the bodies is serialized once; each delivery's names its subscription.
  const corpoPara = corposDaEntrega(
    {
      evento_id: id,
      tipo: tipo.nome,
      versao_do_esquema: versao.versao,
      entidade_id: corpo.entidade_id,
      ocorrido_em: ocorridoEm,
      recebido_em: recebidoEm,
      aplicativo_publicador_id: tipo.aplicativoId,
      // A panel user's publication is a test (contract §4.3 r2): the subscriber can tell it from the body.
      teste,
    },
    p.dadosTexto,
  );
  // Typed, not parsed: every field is built right here (a parse cost 3 zod runs per event).
  const rastro = p.trecho?.rastro;
  const trabalhos: OutboxMessage[] = entregas.map((e) => ({
    exchange: trabalhoDeEntrega.exchange,
    routingKey: trabalhoDeEntrega.routingKey,
    messageId: e.id,
    ...(rastro ? { headers: { ...rastro } } : {}),
    body: {
      entrega_id: e.id,
      evento_id: id,
      assinatura_id: e.assinaturaId,
      url_de_destino: e.urlDeDestino,
      // An ordered delivery's body waits for its sequencia (gravacao-em-grupo.ts).
      corpo: e.ordenada ? '' : corpoPara(e.assinaturaId),
      request_id: p.requestId,
    } satisfies TrabalhoDeEntrega,
  }));
  return {
    evento: {
      id,
      tipoDeEventoId: tipo.id,
      versaoDoEsquema: versao.versao,
      aplicativoPublicadorId: tipo.aplicativoId,
      entidadeId: corpo.entidade_id,
      ocorridoEm,
      recebidoEm,
      publicadoPeloEmail: p.publicadoPeloEmail,
      dadosTexto: p.dadosTexto,
    },
    entregas,
    trabalhos,
    corpoPara,
    ...(p.chave ? { chave: p.chave } : {}),
    ...(p.trecho ? { trecho: p.trecho } : {}),
  };
}

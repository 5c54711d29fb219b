// The rows the delivery worker's statements take and give (entregas.repository.ts), and a job rebuilt from one.
import { corpoDaEntrega, type TrabalhoDeEntrega, trabalhoDeEntrega } from '@hub/contracts';
import type { Columns } from '@hub/database';

/** A job asking to claim its delivery: a new token, and the token its job carries from an earlier claim. */
export interface Pedido {
  id: string;
  token: string;
  anterior: string | null;
}

/**
 * A delivery claimed for an attempt (situacao em_andamento now, held by the pedido's token), cancelled
 * for good, or in fila_de_erro as a poison job (its claims kept dying with their worker).
 */
export interface Reivindicada {
  id: string;
  situacao: 'em_andamento' | 'cancelada' | 'fila_de_erro';
  tentativas_no_ciclo_atual: number;
  maximo_de_tentativas: number;
  /** The subscription's url_de_destino now: where this attempt goes (a PATCH after the job was written counts). */
  url_de_destino: string;
  ultimo_erro: string | null;
  /** Of an ordered subscription's delivery (a bigint, as text): cancelada or fila_de_erro here passes its entity's turn. */
  sequencia: string | null;
  assinatura_id: string;
  entidade_id: string;
  /** The subscription's formato now (migration 030): the shape this attempt's body takes. */
  formato: 'standard-webhooks' | 'cloudevents';
}

/**
 * A delivery of an ordered subscription that became final: the turn of its entity passes to the
 * next one (docs/decisions/ordered-delivery-per-entity.md).
 */
export interface Final {
  assinatura_id: string;
  entidade_id: string;
  /** bigint, as text */
  sequencia: string;
}

/** One attempt to record. */
export interface Registro {
  entrega_id: string;
  tentativa_id: string;
  iniciada_em: Date;
  duracao_ms: number;
  status_http: number | null;
  sucesso: boolean;
  resposta: string | null;
  erro: string | null;
  cabecalhos: Record<string, string>;
  /** 410 Gone: the subscription is switched off and the delivery goes to the error queue at once. */
  encerrar: boolean;
  /**
   * When the next attempt is due if this one failed and attempts remain (its job's own expiry); null
   * for a success, whose record does not read it.
   */
  proxima_tentativa_em: Date | null;
  /**
   * The latest moment its job can be back: the end of its delay step (a message expires only at the
   * head of its queue); null for a success, whose record does not read it.
   */
  retorno_ate: Date | null;
}

/** What recording did to a delivery; absent when it was final already (another worker recorded it). */
export interface Registrada {
  id: string;
  situacao: 'concluida' | 'aguardando_nova_tentativa' | 'fila_de_erro' | 'cancelada';
  tentativas_no_ciclo_atual: number;
  /** Of an ordered subscription's delivery (bigint, as text); null otherwise. */
  sequencia: string | null;
  assinatura_id: string;
  entidade_id: string;
}

/** A job the sweeper sends again, rebuilt from the database. */
export interface Perdida {
  entrega_id: string;
  evento_id: string;
  assinatura_id: string;
  url_de_destino: string;
  evento_tipo: string;
  versao_do_esquema: number;
  entidade_id: string;
  ocorrido_em: Date;
  recebido_em: Date;
  aplicativo_publicador_id: string;
  dados: string;
  /** Published from the panel (publicado_pelo_email set): the body says so. */
  teste: boolean;
  tentativas_no_ciclo_atual: number;
  ultimo_erro: string | null;
  /** Its place among its entity's deliveries when its subscription is ordered (bigint, as text). */
  sequencia: string | null;
}

/** Perdida's columns as TRABALHO_DAS_MARCADAS gives them (declared statements, @hub/database). */
export const COLUNAS_DA_PERDIDA: Columns<Perdida> = {
  entrega_id: 'text',
  evento_id: 'text',
  assinatura_id: 'text',
  url_de_destino: 'text',
  evento_tipo: 'text',
  versao_do_esquema: 'int4',
  entidade_id: 'text',
  ocorrido_em: 'timestamptz',
  recebido_em: 'timestamptz',
  aplicativo_publicador_id: 'text',
  dados: 'text',
  teste: 'bool',
  tentativas_no_ciclo_atual: 'int4',
  ultimo_erro: 'text',
  sequencia: 'text',
};

/** The job of a delivery, rebuilt from the database as publication writes it. */
export function trabalhoDaLinha(p: Perdida): TrabalhoDeEntrega {
  return trabalhoDeEntrega.schema.parse({
    entrega_id: p.entrega_id,
    evento_id: p.evento_id,
    assinatura_id: p.assinatura_id,
    url_de_destino: p.url_de_destino,
    corpo: corpoDaEntrega(
      { ...p, tipo: p.evento_tipo, ocorrido_em: new Date(p.ocorrido_em), recebido_em: new Date(p.recebido_em) },
      p.assinatura_id,
      p.dados,
      p.sequencia === null ? null : Number(p.sequencia),
    ),
    request_id: null,
  });
}

/** What rebuilding a job reads, from `marcadas` (the rows a statement changed). */
export const TRABALHO_DAS_MARCADAS = `
  select m.id::text as entrega_id, m.evento_id::text, m.assinatura_id::text, m.url_de_destino,
         t.nome as evento_tipo, ev.versao_do_esquema, ev.entidade_id, ev.ocorrido_em, ev.recebido_em,
         ev.aplicativo_publicador_id::text, ev.dados::text as dados, ev.publicado_pelo_email is not null as teste,
         m.tentativas_no_ciclo_atual, m.ultimo_erro, m.sequencia::text
  from marcadas m
  join evento ev on ev.id = m.evento_id
  join tipo_de_evento t on t.id = ev.tipo_de_evento_id`;

/** How long a claim holds a delivery, and after how many dead claims a job is poison. */
export interface Prazos {
  /** The claim's lease: longer than a worker can take from its claim to its record. */
  reivindicacaoMs: number;
  /** Claims in a row that ended with no attempt recorded (their worker died) before the next marks the job poison. */
  reivindicacoesAteVeneno: number;
}

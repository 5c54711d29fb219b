import { corposDaEntrega, trabalhoDeEntrega } from '@hub/contracts';
import { uuidv7 } from '@hub/database';
import { AppError, conflict, forbidden, invalidField, notFound, unprocessable } from '@hub/http';
import type { OutboxMessage } from '@hub/outbox';
import type { CacheDeLeitura } from '../../cache';
import type { Db } from '../../db';
import { iso } from '../../schemas';
import type { ValidadorDeEsquemas } from '../../validation/esquemas';
import type { EntregaDto, EventoCriar } from '../eventos/eventos.schemas';
import type { TiposRepository } from '../tipos-de-evento/tipos-de-evento.repository';
import type { VersoesRepository } from '../versoes-de-esquema/versoes-de-esquema.repository';
import { type EventoDetalhadoTexto, lerEventoDetalhado } from './detalhe.repository';
import { type Gravacao, type GravadorEmGrupo, type NovaEntrega, VALIDADE_DA_CHAVE_MS } from './gravacao-em-grupo';
import type { PublicacaoRepository } from './publicacao.repository';

/** Who publishes: an application (its token, or the platform's own), or a panel user for the type's owner. */
export type Publicador = { aplicativoId: string } | { email: string };

export interface Idempotencia {
  /** 'aplicativo:<id>', 'usuario:<e-mail>' or 'plataforma': keys of different publishers never meet. */
  escopo: string;
  chave: string;
  /** sha-256 of the request body (of the message, for the platform). */
  impressao: string;
}

export interface Publicacao {
  corpo: EventoCriar;
  /** corpo.dados as the publisher wrote it (JSON text); what is stored and delivered. */
  dadosTexto: string;
  publicador: Publicador;
  idempotencia?: Idempotencia;
  requestId: string | null;
}

export interface PublicacaoDeps {
  db: Db;
  repo: PublicacaoRepository;
  tipos: TiposRepository;
  versoes: VersoesRepository;
  validador: ValidadorDeEsquemas;
  /** Active subscriptions per (type, version), dropped when a subscription changes. */
  assinaturasEmCache?: CacheDeLeitura<Awaited<ReturnType<PublicacaoRepository['assinaturasAtivas']>>>;
  /** The type by id and the version by (type, number), dropped on any registry write. */
  tiposEmCache?: CacheDeLeitura<Awaited<ReturnType<TiposRepository['buscar']>>>;
  versoesEmCache?: CacheDeLeitura<Awaited<ReturnType<VersoesRepository['buscarPorNumero']>>>;
  /** Group commit of publications, keyed or not (its statement is prepared on these connections). */
  gravador: GravadorEmGrupo;
  /** Told of each event written (metrics). */
  aoAceitar?: () => void;
}

const chaveReutilizada = () =>
  unprocessable(
    'chave_de_idempotencia_reutilizada',
    'this Idempotency-Key was used within 24 hours with a different body',
    [{ caminho: '', mensagem: 'the Idempotency-Key header names an earlier request with another body' }],
  );

/**
 * Publication, one code path for POST /eventos, POST /evento and the platform's events (contract §4.3
 * r2, architecture §5): the rules, then ONE statement (gravacao-em-grupo.ts) with the event, a delivery per
 * active subscription of the type and version and the hour's tallies, grouped with concurrent
 * publications, an Idempotency-Key claimed in the same statement. Their delivery jobs are published
 * once it has committed (despacho.ts; what the broker does not confirm goes to the outbox, for the
 * relay), so a broker outage never fails it.
 */
export function publicacaoService(deps: PublicacaoDeps) {
  const { db, repo } = deps;
  const { gravador } = deps;

  async function detalhado(id: string): Promise<EventoDetalhadoTexto> {
    const evento = await lerEventoDetalhado(db, id);
    if (!evento) throw notFound('event');
    return evento;
  }

  /** The first answer of a key again, or the refusal of a key reused with another body. */
  async function repetir(idempotencia: Idempotencia, agora: Date): Promise<EventoDetalhadoTexto | undefined> {
    const guardada = await repo.buscarChave(idempotencia.escopo, idempotencia.chave);
    if (!guardada || guardada.criadaEm.getTime() < agora.getTime() - VALIDADE_DA_CHAVE_MS) return undefined;
    if (guardada.impressao !== idempotencia.impressao) throw chaveReutilizada();
    return detalhado(guardada.eventoId);
  }

  return {
    buscar: detalhado,

    /** An application reads only its own events; another's is simply not found. */
    async buscarDoAplicativo(id: string, aplicativoId: string): Promise<EventoDetalhadoTexto> {
      const evento = await detalhado(id);
      if (evento.evento.aplicativo_publicador_id !== aplicativoId) throw notFound('event');
      return evento;
    },

    async publicar(p: Publicacao): Promise<EventoDetalhadoTexto> {
      const recebidoEm = new Date();
      if (p.idempotencia) {
        const anterior = await repetir(p.idempotencia, recebidoEm);
        if (anterior) return anterior;
      }
      const { corpo } = p;
      const buscarTipo = () => deps.tipos.buscar(corpo.tipo_de_evento_id);
      const tipo = await (deps.tiposEmCache?.obter(corpo.tipo_de_evento_id, buscarTipo) ?? buscarTipo());
      if (!tipo) throw invalidField('/tipo_de_evento_id', 'tipo_de_evento_inexistente', 'no event type has this id');
      if ('aplicativoId' in p.publicador && tipo.aplicativoId !== p.publicador.aplicativoId)
        throw forbidden(
          'only the application that owns the event type publishes its events',
          'tipo_de_outro_aplicativo',
        );
      if (!tipo.ativo) throw conflict('tipo_de_evento_inativo', `the event type ${tipo.nome} is switched off`);
      const buscarVersao = () => deps.versoes.buscarPorNumero(tipo.id, corpo.versao_do_esquema);
      const versao = await (deps.versoesEmCache?.obter(`${tipo.id}:${corpo.versao_do_esquema}`, buscarVersao) ??
        buscarVersao());
      if (!versao)
        throw invalidField(
          '/versao_do_esquema',
          'versao_inexistente',
          `the event type has no schema version ${corpo.versao_do_esquema}`,
        );
      if (!versao.ativa)
        throw conflict('versao_desativada', `version ${versao.versao} of ${tipo.nome} is switched off`);
      const validacao = deps.validador.validarDados(versao, corpo.dados);
      if (!validacao.valido)
        throw unprocessable('dados_invalidos', 'dados does not satisfy the schema of the version', validacao.erros);

      const carregar = () => repo.assinaturasAtivas(tipo.id, versao.versao);
      const assinaturas = await (deps.assinaturasEmCache?.obter(`${tipo.id}:${versao.versao}`, carregar) ?? carregar());
      const id = uuidv7(recebidoEm.getTime());
      const ocorridoEm = corpo.ocorrido_em ? new Date(corpo.ocorrido_em) : recebidoEm;
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
          teste: 'email' in p.publicador,
        },
        p.dadosTexto,
      );
      const trabalhos: OutboxMessage[] = entregas.map((e) => ({
        exchange: trabalhoDeEntrega.exchange,
        routingKey: trabalhoDeEntrega.routingKey,
        messageId: e.id,
        body: trabalhoDeEntrega.schema.parse({
          entrega_id: e.id,
          evento_id: id,
          assinatura_id: e.assinaturaId,
          url_de_destino: e.urlDeDestino,
          corpo: corpoPara(e.assinaturaId),
          request_id: p.requestId,
        }),
      }));

      const gravacao: Gravacao = {
        evento: {
          id,
          tipoDeEventoId: tipo.id,
          versaoDoEsquema: versao.versao,
          aplicativoPublicadorId: tipo.aplicativoId,
          entidadeId: corpo.entidade_id,
          ocorridoEm,
          recebidoEm,
          publicadoPeloEmail: 'email' in p.publicador ? p.publicador.email : null,
          dadosTexto: p.dadosTexto,
        },
        entregas,
        trabalhos,
        ...(p.idempotencia ? { chave: p.idempotencia } : {}),
      };
      // Grouped with the publications arriving meanwhile: one statement, one commit for all. A key
      // another publication holds (committed, or in a statement still in flight, which this one
      // waits for) writes nothing: the answer is that publication's.
      if (!(await gravador.gravar(gravacao))) {
        const anterior = p.idempotencia && (await repetir(p.idempotencia, new Date()));
        if (anterior) return anterior;
        throw new AppError(
          409,
          'chave_de_idempotencia_em_uso',
          'this Idempotency-Key is being used by another request; retry',
        );
      }
      deps.aoAceitar?.();
      // The answer is what was just written (the same as GET /evento/{id} reads back), built
      // here instead of read again: a new event's deliveries are all pendente, in the queue.
      return {
        evento: {
          id,
          tipo_de_evento_id: tipo.id,
          tipo_de_evento_nome: tipo.nome,
          versao_do_esquema: versao.versao,
          aplicativo_publicador_id: tipo.aplicativoId,
          aplicativo_publicador_nome: tipo.aplicativo.nome,
          entidade_id: corpo.entidade_id,
          ocorrido_em: iso(ocorridoEm),
          recebido_em: iso(recebidoEm),
          publicado_pelo_email: gravacao.evento.publicadoPeloEmail,
          quantidade_de_entregas: entregas.length,
          entregas_concluidas: 0,
          entregas_na_fila: entregas.length,
          entregas_na_fila_de_erro: 0,
        },
        dadosTexto: p.dadosTexto,
        entregas: assinaturas
          .map(
            (a, i): EntregaDto => ({
              id: entregas[i]!.id,
              evento_id: id,
              evento_recebido_em: iso(recebidoEm),
              entidade_id: corpo.entidade_id,
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
              proxima_tentativa_em: iso(recebidoEm),
              entregue_em: null,
              ultimo_erro: null,
              criada_em: iso(recebidoEm),
              atualizada_em: iso(recebidoEm),
            }),
          )
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
      };
    },
  };
}
export type PublicacaoService = ReturnType<typeof publicacaoService>;

export const isRecusa = (error: unknown): error is AppError =>
  error instanceof AppError && error.status >= 400 && error.status < 500 && error.status !== 401;

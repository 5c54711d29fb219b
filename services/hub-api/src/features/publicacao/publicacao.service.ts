import { trabalhoDeEntrega } from '@hub/contracts';
import { isUniqueViolation, uuidv7 } from '@hub/database';
import { AppError, conflict, forbidden, invalidField, notFound, unprocessable } from '@hub/http';
import type { OutboxMessage } from '@hub/outbox';
import type { CacheDeLeitura } from '../../cache';
import { type Db, transacao } from '../../db';
import { iso } from '../../schemas';
import type { ValidadorDeEsquemas } from '../../validation/esquemas';
import type { EventoCriar } from '../eventos/eventos.schemas';
import type { TiposRepository } from '../tipos-de-evento/tipos-de-evento.repository';
import type { VersoesRepository } from '../versoes-de-esquema/versoes-de-esquema.repository';
import { type EventoDetalhadoTexto, lerEventoDetalhado } from './detalhe.repository';
import type { PublicacaoRepository } from './publicacao.repository';

/** How long an Idempotency-Key answers with its first event. */
export const VALIDADE_DA_CHAVE_MS = 24 * 3_600_000;

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
}

const chaveReutilizada = () =>
  unprocessable(
    'chave_de_idempotencia_reutilizada',
    'this Idempotency-Key was used within 24 hours with a different body',
    [{ caminho: '', mensagem: 'the Idempotency-Key header names an earlier request with another body' }],
  );

/**
 * Publication, one code path for POST /eventos, POST /evento and the platform's events (spec §4.3
 * r2, DESIGN §5): the rules, then ONE transaction with the event, a delivery per active
 * subscription of the type and version, their delivery jobs in the outbox, the idempotency key and
 * the hour's tally. The relay publishes the jobs after commit, so a broker outage never fails it.
 */
export function publicacaoService(deps: PublicacaoDeps) {
  const { db, repo } = deps;

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
      const tipo = await deps.tipos.buscar(corpo.tipo_de_evento_id);
      if (!tipo) throw invalidField('/tipo_de_evento_id', 'tipo_de_evento_inexistente', 'no event type has this id');
      if ('aplicativoId' in p.publicador && tipo.aplicativoId !== p.publicador.aplicativoId)
        throw forbidden(
          'only the application that owns the event type publishes its events',
          'tipo_de_outro_aplicativo',
        );
      if (!tipo.ativo) throw conflict('tipo_de_evento_inativo', `the event type ${tipo.nome} is switched off`);
      const versao = await deps.versoes.buscarPorNumero(tipo.id, corpo.versao_do_esquema);
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
      const entregas = assinaturas.map((a) => ({
        id: uuidv7(recebidoEm.getTime()),
        eventoId: id,
        eventoRecebidoEm: recebidoEm,
        entidadeId: corpo.entidade_id,
        assinaturaId: a.id,
        aplicativoAssinanteId: a.aplicativoAssinanteId,
        tipoDeEventoId: tipo.id,
        versaoDoEsquema: versao.versao,
        urlDeDestino: a.urlDeDestino,
        situacao: 'pendente',
        maximoDeTentativas: a.maximoDeTentativas,
        proximaTentativaEm: recebidoEm,
        criadaEm: recebidoEm,
        atualizadaEm: recebidoEm,
      }));
      // DESIGN §5's delivery body, with dados spliced in as the publisher wrote it.
      const cabeca = JSON.stringify({
        id,
        tipo: tipo.nome,
        versao_do_esquema: versao.versao,
        entidade_id: corpo.entidade_id,
        ocorrido_em: iso(ocorridoEm),
        recebido_em: iso(recebidoEm),
        aplicativo_publicador_id: tipo.aplicativoId,
      });
      const corpoDaEntrega = `${cabeca.slice(0, -1)},"dados":${p.dadosTexto}}`;
      const trabalhos: OutboxMessage[] = entregas.map((e) => ({
        exchange: trabalhoDeEntrega.exchange,
        routingKey: trabalhoDeEntrega.routingKey,
        messageId: e.id,
        body: trabalhoDeEntrega.schema.parse({
          entrega_id: e.id,
          evento_id: id,
          assinatura_id: e.assinaturaId,
          url_de_destino: e.urlDeDestino,
          corpo: corpoDaEntrega,
          request_id: p.requestId,
        }),
      }));

      try {
        await transacao(db, async (tx) => {
          if (p.idempotencia)
            await repo.guardarChave(
              { ...p.idempotencia, eventoId: id, criadaEm: recebidoEm },
              new Date(recebidoEm.getTime() - VALIDADE_DA_CHAVE_MS),
              tx,
            );
          await repo.inserirEvento(
            {
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
            tx,
          );
          await repo.inserirEntregas(entregas, tx);
          await repo.inserirNaOutbox(trabalhos, tx);
          await repo.contar('eventos', recebidoEm, tx);
        });
      } catch (error) {
        // A concurrent request with the same key committed first: answer with its event.
        if (p.idempotencia && isUniqueViolation(error)) {
          const anterior = await repetir(p.idempotencia, new Date());
          if (anterior) return anterior;
        }
        throw error;
      }
      return detalhado(id);
    },
  };
}
export type PublicacaoService = ReturnType<typeof publicacaoService>;

export const isRecusa = (error: unknown): error is AppError =>
  error instanceof AppError && error.status >= 400 && error.status < 500 && error.status !== 401;

import { AppError, conflict, forbidden, invalidField, notFound, unprocessable } from '@hub/http';
import { iniciarTrecho, type Rastro, type Trecho } from '@hub/tracing';
import type { Db } from '../../db';
import type { ValidadorDeEsquemas } from '../../validation/esquemas';
import type { EventoCriar } from '../eventos/eventos.schemas';
import type { TiposRepository } from '../tipos-de-evento/tipos-de-evento.repository';
import type { VersoesRepository } from '../versoes-de-esquema/versoes-de-esquema.repository';
import { lerEventoDetalhado } from './detalhe.repository';
import { type AlvoDaPublicacao, montarGravacao, VALIDADE_DA_CHAVE_MS } from './gravacao';
import type { GravadorEmGrupo } from './gravacao-em-grupo';
import type { PublicacaoRepository } from './publicacao.repository';
import { type EventoDetalhadoTexto, respostaDaPublicacao } from './resposta';

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
  /** The trace context it came with (a request's or a message's headers). */
  rastro?: Rastro;
}

/** What a repository's lookup gives. */
type Lido<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

export interface PublicacaoDeps {
  db: Db;
  repo: Pick<PublicacaoRepository, 'buscarChave'>;
  /**
   * The registry's lookups of every publication: the type by id, the version by (type, number), the
   * active subscriptions of (type, version). app.ts gives them cached (registro-em-cache.ts).
   */
  tipos: { buscar(id: string): Promise<Lido<TiposRepository['buscar']>> };
  versoes: { buscarPorNumero(tipoId: string, versao: number): Promise<Lido<VersoesRepository['buscarPorNumero']>> };
  assinaturas: {
    assinaturasAtivas(tipoId: string, versao: number): Promise<Lido<PublicacaoRepository['assinaturasAtivas']>>;
  };
  validador: ValidadorDeEsquemas;
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
 * r2, architecture §5): the rules (here), the group write they allow (gravacao.ts), written in ONE
 * statement (gravacao-em-grupo.ts) with the event, a delivery per active subscription of the type
 * and version and the hour's tallies, grouped with concurrent publications, an Idempotency-Key
 * claimed in the same statement, and the answer built from what was written (resposta.ts). Their delivery jobs are published
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

  /** The type, version and subscriptions the publication goes to, or its refusal. */
  async function conferir({ corpo, publicador }: Publicacao): Promise<AlvoDaPublicacao> {
    const tipo = await deps.tipos.buscar(corpo.tipo_de_evento_id);
    if (!tipo) throw invalidField('/tipo_de_evento_id', 'tipo_de_evento_inexistente', 'no event type has this id');
    if ('aplicativoId' in publicador && tipo.aplicativoId !== publicador.aplicativoId)
      throw forbidden('only the application that owns the event type publishes its events', 'tipo_de_outro_aplicativo');
    if (!tipo.ativo) throw conflict('tipo_de_evento_inativo', `the event type ${tipo.nome} is switched off`);
    const versao = await deps.versoes.buscarPorNumero(tipo.id, corpo.versao_do_esquema);
    if (!versao)
      throw invalidField(
        '/versao_do_esquema',
        'versao_inexistente',
        `the event type has no schema version ${corpo.versao_do_esquema}`,
      );
    if (!versao.ativa) throw conflict('versao_desativada', `version ${versao.versao} of ${tipo.nome} is switched off`);
    const validacao = await deps.validador.validarDados(versao, corpo.dados);
    if (!validacao.valido)
      throw unprocessable('dados_invalidos', 'dados does not satisfy the schema of the version', validacao.erros);
    return { tipo, versao, assinaturas: await deps.assinaturas.assinaturasAtivas(tipo.id, versao.versao) };
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
      // Its span (when tracing records) is the parent of its delivery jobs' messages; the batch
      // that writes it links to it (gravacao-em-grupo.ts).
      const trecho = iniciarTrecho('publicacao', {
        pai: p.rastro,
        herdarAtivo: true,
        atributos: { 'hub.tipo_de_evento_id': p.corpo.tipo_de_evento_id },
      });
      try {
        const resposta = await publicarNoTrecho(p, trecho);
        trecho.fim();
        return resposta;
      } catch (error) {
        // A refusal is an answer, not a failure of the span (as a 4xx is not for an HTTP server span).
        if (isRecusa(error)) {
          trecho.atributos({ 'hub.recusa': error.codigo });
          trecho.fim();
        } else trecho.fim(error);
        throw error;
      }
    },
  };

  /** publicar's work, inside its span. */
  async function publicarNoTrecho(p: Publicacao, trecho: Trecho): Promise<EventoDetalhadoTexto> {
    const recebidoEm = new Date();
    if (p.idempotencia) {
      const anterior = await repetir(p.idempotencia, recebidoEm);
      if (anterior) return anterior;
    }
    const alvo = await conferir(p);
    const gravacao = montarGravacao(alvo, {
      corpo: p.corpo,
      dadosTexto: p.dadosTexto,
      publicadoPeloEmail: 'email' in p.publicador ? p.publicador.email : null,
      ...(p.idempotencia ? { chave: p.idempotencia } : {}),
      requestId: p.requestId,
      recebidoEm,
      trecho,
    });
    if (trecho.span)
      trecho.atributos({ 'hub.evento_id': gravacao.evento.id, 'hub.entregas': gravacao.entregas.length });
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
    return respostaDaPublicacao(alvo, gravacao);
  }
}
export type PublicacaoService = ReturnType<typeof publicacaoService>;

export const isRecusa = (error: unknown): error is AppError =>
  error instanceof AppError && error.status >= 400 && error.status < 500 && error.status !== 401;

import { createHash } from 'node:crypto';
import { rastroDe } from '@hub/tracing';
import { type Broker, consumeMessages } from '@hub/broker';
import { type EventoDaPlataforma, eventoDaPlataforma, QUEUES } from '@hub/contracts';
import { bancoIndisponivel, invalidField, unprocessable, zodErros } from '@hub/http';
import type { Logger } from '@hub/log';
import type { AplicativosRepository } from '../features/aplicativos/aplicativos.repository';
import { eventoCriar } from '../features/eventos/eventos.schemas';
import { isRecusa, type PublicacaoService } from '../features/publicacao/publicacao.service';
import type { RegistrarRecusa } from '../features/publicacao/recusas';
import { textoDoMembro } from '../features/publicacao/texto-json';
import type { TiposRepository } from '../features/tipos-de-evento/tipos-de-evento.repository';

export interface EventosDaPlataformaDeps {
  broker: Broker;
  publicacao: PublicacaoService;
  aplicativos: AplicativosRepository;
  tipos: TiposRepository;
  registrarRecusa: RegistrarRecusa;
  logger: Logger;
  /** Another queue than the durable one (tests). */
  queue?: string;
  /** Told after each message was published or refused (operations, tests). */
  onProcessado?: (mensagem: EventoDaPlataforma) => void;
}

/**
 * Publishes the platform's own events (e.g. `colaborador.atualizado` announced by the function
 * service) through the same use case as POST /eventos. The message id is an idempotency key of
 * scope 'plataforma' written in the publication's transaction, so a redelivered message makes no
 * second event. A message the rules refuse is stored as refused and acked (it can never succeed);
 * any other failure puts it back for another try.
 */
export function consumeEventosDaPlataforma(deps: EventosDaPlataformaDeps): Promise<void> {
  return consumeMessages(
    deps.broker,
    deps.queue ?? QUEUES.hubEventosDaPlataforma,
    eventoDaPlataforma,
    async (mensagem, message) => {
      const conteudo = message.content.toString('utf8');
      const remetente = { clientId: mensagem.aplicativo_client_id, aplicativoId: null as string | null };
      try {
        if (mensagem.id.length < 1 || mensagem.id.length > 255)
          throw invalidField('/id', 'id_invalido', 'the message id must have 1 to 255 characters');
        const aplicativo = await deps.aplicativos.buscarPorClientId(mensagem.aplicativo_client_id);
        if (!aplicativo?.ativo)
          throw invalidField(
            '/aplicativo_client_id',
            'aplicativo_nao_registrado',
            'no active application has this client id',
          );
        remetente.aplicativoId = aplicativo.id;
        const tipo = await deps.tipos.buscarPorNome(mensagem.tipo_de_evento_nome);
        if (!tipo)
          throw invalidField('/tipo_de_evento_nome', 'tipo_de_evento_inexistente', 'no event type has this name');
        const corpo = eventoCriar.safeParse({
          tipo_de_evento_id: tipo.id,
          versao_do_esquema: mensagem.versao_do_esquema,
          entidade_id: mensagem.entidade_id,
          dados: mensagem.dados,
          ocorrido_em: mensagem.ocorrido_em,
        });
        if (!corpo.success)
          throw unprocessable(
            'dados_invalidos',
            'the message breaks the rules of a publication',
            zodErros(corpo.error),
          );
        await deps.publicacao.publicar({
          corpo: corpo.data,
          dadosTexto: textoDoMembro(conteudo, 'dados') ?? JSON.stringify(mensagem.dados),
          publicador: { aplicativoId: aplicativo.id },
          idempotencia: {
            escopo: 'plataforma',
            chave: mensagem.id,
            impressao: createHash('sha256').update(message.content).digest('hex'),
          },
          requestId: null,
          rastro: rastroDe(message.properties.headers),
        });
      } catch (error) {
        if (!isRecusa(error)) throw error;
        deps.logger.warn({ codigo: error.codigo, id: mensagem.id }, 'platform event refused');
        await deps.registrarRecusa({ erro: error, corpo: message.content, valor: mensagem, remetente });
      }
      deps.onProcessado?.(mensagem);
    },
    { prefetch: 20, isUnavailable: bancoIndisponivel },
  );
}

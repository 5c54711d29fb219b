import { runOnPrisma } from '@hub/database';
import type { DbClient } from '../../db';
import { iso } from '../../schemas';
import { contadoresDosEventos } from '../eventos/contadores.repository';
import type { EntregaDto, Situacao } from '../eventos/eventos.schemas';
import { EVENTO_DETALHADO } from './publicacao.sql';
import type { EventoDetalhadoTexto } from './resposta';

/**
 * GET /evento/{id}, GET /eventos/{id} and the answer of a publication: the event, its dados as the
 * stored text (`dados::text` is the json column's text verbatim), its counters and its deliveries.
 */
export async function lerEventoDetalhado(db: DbClient, id: string): Promise<EventoDetalhadoTexto | undefined> {
  const [linha] = await runOnPrisma(db, EVENTO_DETALHADO, [id]);
  if (!linha) return undefined;
  const [contadores, entregas] = await Promise.all([
    contadoresDosEventos(db, [id]),
    db.entrega.findMany({
      where: { eventoId: id },
      include: { aplicativoAssinante: { select: { nome: true } } },
      orderBy: { id: 'asc' },
    }),
  ]);
  const { dados, ...evento } = linha;
  return {
    evento: {
      ...evento,
      ocorrido_em: iso(linha.ocorrido_em),
      recebido_em: iso(linha.recebido_em),
      ...contadores.get(id)!,
    },
    dadosTexto: dados,
    entregas: entregas.map(
      (en): EntregaDto => ({
        id: en.id,
        evento_id: en.eventoId,
        evento_recebido_em: iso(en.eventoRecebidoEm),
        entidade_id: en.entidadeId,
        assinatura_id: en.assinaturaId,
        aplicativo_assinante_id: en.aplicativoAssinanteId,
        aplicativo_assinante_nome: en.aplicativoAssinante.nome,
        tipo_de_evento_nome: linha.tipo_de_evento_nome,
        versao_do_esquema: en.versaoDoEsquema,
        url_de_destino: en.urlDeDestino,
        situacao: en.situacao as Situacao,
        quantidade_de_tentativas: en.quantidadeDeTentativas,
        tentativas_no_ciclo_atual: en.tentativasNoCicloAtual,
        maximo_de_tentativas: en.maximoDeTentativas,
        proxima_tentativa_em: iso(en.proximaTentativaEm),
        entregue_em: en.entregueEm ? iso(en.entregueEm) : null,
        ultimo_erro: en.ultimoErro,
        criada_em: iso(en.criadaEm),
        atualizada_em: iso(en.atualizadaEm),
        sequencia: en.sequencia === null ? null : Number(en.sequencia),
      }),
    ),
  };
}

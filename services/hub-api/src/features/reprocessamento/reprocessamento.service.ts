import { uuidv7 } from '@hub/database';
import { conflict, invalidField, notFound, page, type PageRequest } from '@hub/http';
import type { Db } from '../../db';
import { dtoDaSolicitacao, type ReprocessamentoRepository } from './reprocessamento.repository';
import type { SolicitacaoCriar, SolicitacaoDto } from './reprocessamento.schemas';

export interface ReprocessamentoDeps {
  db: Db;
  repo: ReprocessamentoRepository;
  /** Wakes the background runner (jobs/reprocessamento.job.ts) so a new request starts at once. */
  acordar: () => void;
  relogio?: () => Date;
}

/**
 * Requests to reprocess deliveries of the error queue (architecture §4, Solicitação de reprocessamento).
 * Asking only records the request (pendente) with how many deliveries match now; the runner does
 * the work in batches in the background.
 */
export function reprocessamentoService(deps: ReprocessamentoDeps) {
  const { db, repo } = deps;
  const relogio = deps.relogio ?? (() => new Date());

  async function buscar(id: string): Promise<SolicitacaoDto> {
    const solicitacao = await repo.buscar(id);
    if (!solicitacao) throw notFound('reprocessing request');
    return dtoDaSolicitacao(solicitacao);
  }

  return {
    async listar(request: PageRequest) {
      const { itens, total } = await repo.listar(request);
      return page(itens.map(dtoDaSolicitacao), request, total);
    },

    buscar,

    async solicitar(corpo: SolicitacaoCriar, email: string | null): Promise<SolicitacaoDto> {
      if (corpo.assinatura_id && !(await db.assinatura.findUnique({ where: { id: corpo.assinatura_id } })))
        throw invalidField('/assinatura_id', 'assinatura_inexistente', 'no subscription has this id');
      if (corpo.tipo_de_evento_id && !(await db.tipoDeEvento.findUnique({ where: { id: corpo.tipo_de_evento_id } })))
        throw invalidField('/tipo_de_evento_id', 'tipo_de_evento_inexistente', 'no event type has this id');
      const agora = relogio();
      const alcance = {
        entregaIds: corpo.entrega_ids ? [...new Set(corpo.entrega_ids)] : null,
        assinaturaId: corpo.assinatura_id ?? null,
        tipoDeEventoId: corpo.tipo_de_evento_id ?? null,
        desde: corpo.desde ? new Date(corpo.desde) : null,
        ate: corpo.ate ? new Date(corpo.ate) : null,
        ate_atualizada_em: agora,
      };
      const criada = await repo.criar({
        id: uuidv7(agora.getTime()),
        situacao: 'pendente',
        entregaIds: alcance.entregaIds ?? undefined,
        assinaturaId: alcance.assinaturaId,
        tipoDeEventoId: alcance.tipoDeEventoId,
        desde: alcance.desde,
        ate: alcance.ate,
        quantidadeDeEntregas: await repo.contar(alcance),
        solicitadaPeloEmail: email,
        criadaEm: agora,
        atualizadaEm: agora,
      });
      deps.acordar();
      return dtoDaSolicitacao(criada);
    },

    /** Only a pendente request is cancelled; one whose batches started runs to the end. */
    async cancelar(id: string): Promise<void> {
      const { count } = await repo.cancelar(id, relogio());
      if (count === 1) return;
      const solicitacao = await buscar(id);
      throw conflict(
        'reprocessamento_nao_pendente',
        `the request is ${solicitacao.situacao}: only a pendente request can be cancelled`,
      );
    },
  };
}
export type ReprocessamentoService = ReturnType<typeof reprocessamentoService>;

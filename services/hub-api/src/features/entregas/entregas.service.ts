import { conflict, notFound, page, type PageRequest } from '@hub/http';
import { type Db, transacao } from '../../db';
import { SITUACOES_NA_FILA } from '../eventos/eventos.schemas';
import { iniciarNovoCiclo } from './ciclo';
import type { EntregaDetalhadaDto, FiltroDeEntregas } from './entregas.schemas';
import type { EntregasRepository, EscopoDeEntregas } from './entregas.repository';

export interface EntregasDeps {
  db: Db;
  repo: EntregasRepository;
  /** The lists' and filters' repository (a read replica's when there is one); `repo` unless given. */
  leitura?: EntregasRepository;
  /** Told after a delivery left fila_de_erro, so its message leaves the error queue (reconciliation). */
  aoSairDaFilaDeErro: () => void;
  relogio?: () => Date;
}

/** The panel's deliveries (architecture §4, Entrega): reads, and resending one delivery. */
export function entregasService(deps: EntregasDeps) {
  const { db, repo } = deps;
  const leitura = deps.leitura ?? repo;
  const relogio = deps.relogio ?? (() => new Date());

  async function detalhada(id: string, escopo: EscopoDeEntregas = {}): Promise<EntregaDetalhadaDto> {
    const entrega = await repo.buscar(id, escopo);
    if (!entrega) throw notFound('delivery');
    return { ...entrega, tentativas: await repo.tentativas(id) };
  }

  return {
    async listar(query: FiltroDeEntregas & PageRequest) {
      const { pagina, tamanho, ...filtro } = query;
      const { itens, total } = await leitura.listar(filtro, { pagina, tamanho });
      return page(itens, { pagina, tamanho }, total);
    },

    filtrar: (filtro: FiltroDeEntregas) => leitura.filtrar(filtro),

    buscar: detalhada,

    /**
     * A new cycle for one delivery, its job in the outbox in the same transaction. Refused while the
     * delivery is still in the queue (its job is in flight: a second one would deliver it twice) and
     * when its subscription is switched off or deleted (nobody would receive it). With an `escopo`
     * (a subscribing application's own route), a delivery outside it is not found.
     */
    async reenviar(id: string, requestId: string | null, escopo: EscopoDeEntregas = {}): Promise<EntregaDetalhadaDto> {
      const antes = await transacao(db, async (tx) => {
        const entrega = await repo.travarParaReenvio(id, tx, escopo);
        if (!entrega) throw notFound('delivery');
        if (SITUACOES_NA_FILA.includes(entrega.situacao))
          throw conflict(
            'entrega_em_andamento',
            `the delivery is ${entrega.situacao}: its job is still in the queue; resend it once it is concluida, fila_de_erro or cancelada`,
          );
        if (!entrega.assinatura_ativa)
          throw conflict('assinatura_inativa', 'the subscription of this delivery is switched off or deleted');
        await iniciarNovoCiclo(tx, [id], relogio(), requestId);
        return entrega.situacao;
      });
      if (antes === 'fila_de_erro') deps.aoSairDaFilaDeErro();
      return detalhada(id, escopo);
    },
  };
}
export type EntregasService = ReturnType<typeof entregasService>;

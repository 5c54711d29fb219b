import type { DbClient } from '@hub/hub-data';

/** Where an isolated destination is in its life (migration 015). */
export type Estado = 'isolada' | 'saindo' | 'removendo';
export type Motivo = 'retida' | 'acumulo';

/** An isolated destination as this process last read it. */
export interface Isolada {
  id: string;
  origem: string;
  estado: Estado;
  /** saindo for longer than the grace: nobody consumes its queue any more */
  parada: boolean;
  /** its queue may be removed now (or a removal that stalled may be taken over) */
  removivel: boolean;
  /** isolated for longer than the quiet period: it may start going back */
  assentada: boolean;
}

/** The waits of an isolated destination's life (DELIVERY_ISOLATION_*). */
export interface PrazosDoIsolamento {
  /** How long a destination going back is still consumed before its consumers stop. */
  carenciaMs: number;
  /**
   * After the grace, how long before its queue is removed: every worker has stopped its consumer
   * (two refreshes) and every job it had taken is settled (a claim's lease).
   */
  margemMs: number;
  /** How long an isolated destination, not held, keeps its queue empty before it starts going back. */
  quietudeMs: number;
  /**
   * The most destinations with a queue of their own at once (each is a quorum queue and a consumer
   * per worker); past it, a held destination's jobs wait in the delay queues and a backlog stays in
   * the shared queue. A soft bound: two workers isolating at the same instant may pass it by one.
   */
  maximo: number;
}

/**
 * The statements of fair scheduling's rows (destino.isolamento): every transition is one conditional
 * UPDATE, so any number of workers can try it and one does it.
 */
export function isolamentoRepository(db: DbClient, prazos: PrazosDoIsolamento) {
  return {
    /**
     * The row locked first: a worker isolating it at the same time is waited for and its change is
     * what `alvo` reads (a plain read would see the row as the statement began, not isolated, and
     * this job would take the delay queue's way for nothing).
     */
    async isolar(origem: string, motivo: Motivo) {
      const [linha] = await db.$queryRaw<{ id: string; isolamento: Estado | null; mudou: boolean }[]>`
      with alvo as (select id, isolamento, isolamento_desde from destino where origem = ${origem} for update),
      mudada as (
        update destino d
           set isolamento = 'isolada', isolamento_desde = now(), isolamento_motivo = ${motivo}
          from alvo
         where d.id = alvo.id
           and (alvo.isolamento is not null
                or (select count(*) from destino where isolamento is not null) < ${prazos.maximo})
           and (alvo.isolamento is null
                -- going back but still consumed: it comes back at once
                or (alvo.isolamento = 'saindo' and alvo.isolamento_desde >= now() - ${prazos.carenciaMs} * interval '1 millisecond'))
        returning d.id)
      select alvo.id::text, case when m.id is null then alvo.isolamento else 'isolada' end as isolamento, m.id is not null as mudou
        from alvo left join mudada m on m.id = alvo.id`;
      return linha;
    },

    ler() {
      const { carenciaMs, margemMs, quietudeMs } = prazos;
      return db.$queryRaw<Isolada[]>`
      select id::text, origem, isolamento as estado,
             isolamento = 'saindo' and isolamento_desde < now() - ${carenciaMs} * interval '1 millisecond' as parada,
             (isolamento = 'saindo' and isolamento_desde < now() - ${carenciaMs + margemMs} * interval '1 millisecond')
               or (isolamento = 'removendo' and isolamento_desde < now() - ${margemMs} * interval '1 millisecond') as removivel,
             isolamento_desde < now() - ${quietudeMs} * interval '1 millisecond' as assentada
        from destino where isolamento is not null`;
    },

    /** Starts going back (saindo), if still isolated for longer than the quiet period: the rows changed. */
    sair(id: string): Promise<number> {
      return db.$executeRaw`
      update destino set isolamento = 'saindo', isolamento_desde = now()
       where id = ${id}::uuid and isolamento = 'isolada'
         and isolamento_desde < now() - ${prazos.quietudeMs} * interval '1 millisecond'`;
    },

    /** Takes the removal of a queue (removendo), or one that stalled: the rows changed. */
    tomarRemocao(id: string): Promise<number> {
      return db.$executeRaw`
      update destino set isolamento = 'removendo', isolamento_desde = now()
       where id = ${id}::uuid
         and ((isolamento = 'saindo' and isolamento_desde < now() - ${prazos.carenciaMs + prazos.margemMs} * interval '1 millisecond')
              or (isolamento = 'removendo' and isolamento_desde < now() - ${prazos.margemMs} * interval '1 millisecond'))`;
    },

    /** The queue is gone: the row says shared again. */
    async concluirRemocao(id: string): Promise<void> {
      await db.$executeRaw`
      update destino set isolamento = null, isolamento_desde = now(), isolamento_motivo = null
       where id = ${id}::uuid and isolamento = 'removendo'`;
    },
  };
}
export type IsolamentoRepository = ReturnType<typeof isolamentoRepository>;

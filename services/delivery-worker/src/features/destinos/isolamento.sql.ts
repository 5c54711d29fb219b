import { prismaStatement } from '@hub/database';
import type { Estado, Isolada } from './isolamento.repository';

// Fair scheduling's statements (isolamento.repository.ts), run on Prisma, checked by entregas/sql.test.ts.

/**
 * Isolates origin $1 for reason $2, its row locked first: while fewer than $3 destinations have a
 * queue of their own, or one going back for less than $4 ms (the grace) comes back at once.
 */
export const ISOLAMENTO_ISOLAR = prismaStatement<{ id: string; isolamento: Estado | null; mudou: boolean }>({
  name: 'isolamento_isolar',
  text: `with alvo as (select id, isolamento, isolamento_desde from destino where origem = $1 for update),
      mudada as (
        update destino d
           set isolamento = 'isolada', isolamento_desde = now(), isolamento_motivo = $2
          from alvo
         where d.id = alvo.id
           and (alvo.isolamento is not null
                or (select count(*) from destino where isolamento is not null) < $3)
           and (alvo.isolamento is null
                -- going back but still consumed: it comes back at once
                or (alvo.isolamento = 'saindo' and alvo.isolamento_desde >= now() - $4 * interval '1 millisecond'))
        returning d.id)
      select alvo.id::text, case when m.id is null then alvo.isolamento else 'isolada' end as isolamento, m.id is not null as mudou
        from alvo left join mudada m on m.id = alvo.id`,
  parameters: ['text', 'text', 'int8', 'float8'],
  columns: { id: 'text', isolamento: 'text', mudou: 'bool' },
});

/** The isolated destinations, by the waits: $1 the grace, $2 grace and margin, $3 the margin, $4 the quiet period. */
export const ISOLAMENTO_LER = prismaStatement<Isolada>({
  name: 'isolamento_ler',
  text: `select id::text, origem, isolamento as estado,
             isolamento = 'saindo' and isolamento_desde < now() - $1 * interval '1 millisecond' as parada,
             (isolamento = 'saindo' and isolamento_desde < now() - $2 * interval '1 millisecond')
               or (isolamento = 'removendo' and isolamento_desde < now() - $3 * interval '1 millisecond') as removivel,
             isolamento_desde < now() - $4 * interval '1 millisecond' as assentada
        from destino where isolamento is not null`,
  parameters: ['float8', 'float8', 'float8', 'float8'],
  columns: { id: 'text', origem: 'text', estado: 'text', parada: 'bool', removivel: 'bool', assentada: 'bool' },
});

/** Destination $1 starts going back, if isolated for longer than $2 ms. */
export const ISOLAMENTO_SAIR = prismaStatement({
  name: 'isolamento_sair',
  text: `update destino set isolamento = 'saindo', isolamento_desde = now()
       where id = $1::uuid and isolamento = 'isolada'
         and isolamento_desde < now() - $2 * interval '1 millisecond'`,
  parameters: ['uuid', 'float8'],
  columns: {},
});

/** Takes destination $1's queue removal: going back for over $2 ms, or a removal stalled for over $3 ms. */
export const ISOLAMENTO_TOMAR_REMOCAO = prismaStatement({
  name: 'isolamento_tomar_remocao',
  text: `update destino set isolamento = 'removendo', isolamento_desde = now()
       where id = $1::uuid
         and ((isolamento = 'saindo' and isolamento_desde < now() - $2 * interval '1 millisecond')
              or (isolamento = 'removendo' and isolamento_desde < now() - $3 * interval '1 millisecond'))`,
  parameters: ['uuid', 'float8', 'float8'],
  columns: {},
});

/** Destination $1's queue is gone: shared again. */
export const ISOLAMENTO_CONCLUIR_REMOCAO = prismaStatement({
  name: 'isolamento_concluir_remocao',
  text: `update destino set isolamento = null, isolamento_desde = now(), isolamento_motivo = null
       where id = $1::uuid and isolamento = 'removendo'`,
  parameters: ['uuid'],
  columns: {},
});

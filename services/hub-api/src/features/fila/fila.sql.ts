import { prismaStatement } from '@hub/database';
import type { EntregaNaFilaDeErro, EstadoDaEntrega } from './fila.repository';

// The error queue's statements of fixed text, run on Prisma (runOnPrisma), checked by publicacao/sql.test.ts.

/** Deliveries $1 now. */
export const FILA_ESTADOS = prismaStatement<EstadoDaEntrega>({
  name: 'fila_estados',
  text: 'select id::text, situacao, atualizada_em from entrega where id = any($1::uuid[])',
  parameters: ['uuid[]'],
  columns: { id: 'text', situacao: 'text', atualizada_em: 'timestamptz' },
});

/** Marks fila_de_erro at $1 (error $2) the deliveries $3 still as read ($4 situacao, $5 atualizada_em). */
export const FILA_MARCAR_ENVENENADAS = prismaStatement<{ id: string }>({
  name: 'fila_marcar_envenenadas',
  text: `update entrega en
           set situacao = 'fila_de_erro', atualizada_em = $1, ultimo_erro = $2
          from unnest($3::uuid[], $4::text[], $5::timestamptz[]) as lida(id, situacao, atualizada_em)
         where en.id = lida.id and en.situacao = lida.situacao and en.atualizada_em = lida.atualizada_em
        returning en.id::text`,
  parameters: ['timestamptz', 'text', 'uuid[]', 'text[]', 'timestamptz[]'],
  columns: { id: 'text' },
});

/** The destinations with a queue of their own (isolated, going back or being removed). */
export const FILA_DESTINOS_COM_FILA = prismaStatement<{ id: string; origem: string }>({
  name: 'fila_destinos_com_fila',
  text: 'select id::text, origem from destino where isolamento is not null order by origem',
  parameters: [],
  columns: { id: 'text', origem: 'text' },
});

/** Up to $4 deliveries in fila_de_erro since before $1, after ($2 criada_em, $3 id). */
export const FILA_NA_FILA_DE_ERRO = prismaStatement<EntregaNaFilaDeErro>({
  name: 'fila_na_fila_de_erro',
  text: `select e.id::text, e.criada_em, e.tentativas_no_ciclo_atual, e.ultimo_erro
          from entrega_nao_concluida c join entrega e on e.id = c.entrega_id
         where c.fase = 'fila_de_erro' and e.situacao = 'fila_de_erro' and e.atualizada_em < $1
           and (c.criada_em, c.entrega_id) > ($2, $3::uuid)
         order by c.criada_em, c.entrega_id limit $4`,
  parameters: ['timestamptz', 'timestamptz', 'uuid', 'int8'],
  columns: { id: 'text', criada_em: 'timestamptz', tentativas_no_ciclo_atual: 'int4', ultimo_erro: 'text' },
});

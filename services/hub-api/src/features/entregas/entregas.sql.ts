import { prismaStatement } from '@hub/database';
import type { EntregaParaReenvio, LinhaDeEntrega } from './entregas.repository';
import type { LinhaDoTrabalho } from './trabalho';

// The deliveries' statements of fixed text, run on Prisma (runOnPrisma), checked by publicacao/sql.test.ts.

/** A delivery's columns with its names, of the rows `p` (id, criada_em) joined to entrega `en`. */
export const COLUNAS_COM_NOMES = `en.id::text, en.evento_id::text, en.evento_recebido_em, en.entidade_id, en.assinatura_id::text,
         en.aplicativo_assinante_id::text, a.nome as aplicativo_assinante_nome, t.nome as tipo_de_evento_nome,
         en.versao_do_esquema, en.url_de_destino, en.situacao, en.quantidade_de_tentativas,
         en.tentativas_no_ciclo_atual, en.maximo_de_tentativas, en.proxima_tentativa_em, en.entregue_em,
         en.ultimo_erro, en.criada_em, en.atualizada_em, en.sequencia::int`;

/** The joins of COLUNAS_COM_NOMES, after `from (…) p`. */
export const JUNCOES_DOS_NOMES = `join entrega en on en.id = p.id
    join aplicativo a on a.id = en.aplicativo_assinante_id
    join tipo_de_evento t on t.id = en.tipo_de_evento_id`;

const COLUNAS_DA_ENTREGA = {
  id: 'text',
  evento_id: 'text',
  evento_recebido_em: 'timestamptz',
  entidade_id: 'text',
  assinatura_id: 'text',
  aplicativo_assinante_id: 'text',
  aplicativo_assinante_nome: 'text',
  tipo_de_evento_nome: 'text',
  versao_do_esquema: 'int4',
  url_de_destino: 'text',
  situacao: 'text',
  quantidade_de_tentativas: 'int4',
  tentativas_no_ciclo_atual: 'int4',
  maximo_de_tentativas: 'int4',
  proxima_tentativa_em: 'timestamptz',
  entregue_em: 'timestamptz',
  ultimo_erro: 'text',
  criada_em: 'timestamptz',
  atualizada_em: 'timestamptz',
  sequencia: 'int4',
} as const;

/** Delivery $1 with its names; of subscribing application $2 only, when $2 is not null. */
export const ENTREGA_BUSCAR = prismaStatement<LinhaDeEntrega>({
  name: 'entrega_buscar',
  text: `select ${COLUNAS_COM_NOMES}
    from (select id, criada_em from entrega
           where id = $1::uuid and ($2::uuid is null or aplicativo_assinante_id = $2::uuid)) p
    ${JUNCOES_DOS_NOMES}`,
  parameters: ['uuid', 'uuid'],
  columns: COLUNAS_DA_ENTREGA,
});

/** Locks delivery $1's row (of application $2 only, when not null) and reads its subscription. */
export const ENTREGA_TRAVAR_PARA_REENVIO = prismaStatement<EntregaParaReenvio>({
  name: 'entrega_travar_para_reenvio',
  text: `select en.situacao, (s.ativa and s.excluida_em is null) as assinatura_ativa
          from entrega en join assinatura s on s.id = en.assinatura_id
         where en.id = $1::uuid and ($2::uuid is null or en.aplicativo_assinante_id = $2::uuid)
           for update of en`,
  parameters: ['uuid', 'uuid'],
  columns: { situacao: 'text', assinatura_ativa: 'bool' },
});

/** A new cycle for deliveries $2 at $1, towards their subscription's current address (ciclo.ts). */
export const ENTREGA_NOVO_CICLO = prismaStatement({
  name: 'entrega_novo_ciclo',
  text: `update entrega en
       set situacao = 'pendente', tentativas_no_ciclo_atual = 0, proxima_tentativa_em = $1, em_espera = false,
           atualizada_em = $1, url_de_destino = s.url_de_destino, maximo_de_tentativas = s.maximo_de_tentativas
      from assinatura s
     where s.id = en.assinatura_id and en.id = any($2::uuid[])`,
  parameters: ['timestamptz', 'uuid[]'],
  columns: {},
});

/** What the delivery jobs of deliveries $1 are rebuilt from (trabalho.ts). */
export const ENTREGA_TRABALHOS = prismaStatement<LinhaDoTrabalho>({
  name: 'entrega_trabalhos',
  text: `select en.id::text as entrega_id, en.evento_id::text, en.assinatura_id::text, en.url_de_destino,
           t.nome as tipo, e.versao_do_esquema, e.entidade_id, e.ocorrido_em, e.recebido_em,
           e.aplicativo_publicador_id::text, e.dados::text as dados,
           e.publicado_pelo_email is not null as teste, en.sequencia::int
      from entrega en
      join evento e on e.id = en.evento_id
      join tipo_de_evento t on t.id = e.tipo_de_evento_id
     where en.id = any($1::uuid[])`,
  parameters: ['uuid[]'],
  columns: {
    entrega_id: 'text',
    evento_id: 'text',
    assinatura_id: 'text',
    url_de_destino: 'text',
    tipo: 'text',
    versao_do_esquema: 'int4',
    entidade_id: 'text',
    ocorrido_em: 'timestamptz',
    recebido_em: 'timestamptz',
    aplicativo_publicador_id: 'text',
    dados: 'text',
    teste: 'bool',
    sequencia: 'int4',
  },
});

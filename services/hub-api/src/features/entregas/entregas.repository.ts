import type { PageRequest } from '@hub/http';
import { Prisma } from '@hub/hub-data';
import type { DbClient, Tx } from '../../db';
import { iso } from '../../schemas';
import type { EntregaDto, Situacao } from '../eventos/eventos.schemas';
import { tentativaDto } from '../tentativas/tentativas.service';
import type { TentativaDto } from '../tentativas/tentativas.schemas';
import { FILTRO_ENTREGAS_MAX, type FiltroDeEntregas } from './entregas.schemas';

interface LinhaDeEntrega {
  id: string;
  evento_id: string;
  evento_recebido_em: Date;
  entidade_id: string;
  assinatura_id: string;
  aplicativo_assinante_id: string;
  aplicativo_assinante_nome: string;
  tipo_de_evento_nome: string;
  versao_do_esquema: number;
  url_de_destino: string;
  situacao: Situacao;
  quantidade_de_tentativas: number;
  tentativas_no_ciclo_atual: number;
  maximo_de_tentativas: number;
  proxima_tentativa_em: Date;
  entregue_em: Date | null;
  ultimo_erro: string | null;
  criada_em: Date;
  atualizada_em: Date;
}

const dto = (l: LinhaDeEntrega): EntregaDto => ({
  ...l,
  evento_recebido_em: iso(l.evento_recebido_em),
  proxima_tentativa_em: iso(l.proxima_tentativa_em),
  entregue_em: l.entregue_em ? iso(l.entregue_em) : null,
  criada_em: iso(l.criada_em),
  atualizada_em: iso(l.atualizada_em),
});

/** The rows of `ids` (a subquery of id and criada_em) with their names, newest first. */
const comNomes = (ids: Prisma.Sql) => Prisma.sql`
  select en.id::text, en.evento_id::text, en.evento_recebido_em, en.entidade_id, en.assinatura_id::text,
         en.aplicativo_assinante_id::text, a.nome as aplicativo_assinante_nome, t.nome as tipo_de_evento_nome,
         en.versao_do_esquema, en.url_de_destino, en.situacao, en.quantidade_de_tentativas,
         en.tentativas_no_ciclo_atual, en.maximo_de_tentativas, en.proxima_tentativa_em, en.entregue_em,
         en.ultimo_erro, en.criada_em, en.atualizada_em
    from (${ids}) p
    join entrega en on en.id = p.id
    join aplicativo a on a.id = en.aplicativo_assinante_id
    join tipo_de_evento t on t.id = en.tipo_de_evento_id
   order by p.criada_em desc, p.id desc`;

function condicoes(f: FiltroDeEntregas): Prisma.Sql {
  const partes: Prisma.Sql[] = [];
  if (f.situacao) partes.push(Prisma.sql`situacao = ${f.situacao}`);
  if (f.assinatura_id) partes.push(Prisma.sql`assinatura_id = ${f.assinatura_id}::uuid`);
  if (f.evento_id) partes.push(Prisma.sql`evento_id = ${f.evento_id}::uuid`);
  if (f.aplicativo_assinante_id) partes.push(Prisma.sql`aplicativo_assinante_id = ${f.aplicativo_assinante_id}::uuid`);
  if (f.tipo_de_evento_id) partes.push(Prisma.sql`tipo_de_evento_id = ${f.tipo_de_evento_id}::uuid`);
  if (f.desde) partes.push(Prisma.sql`criada_em >= ${f.desde}`);
  if (f.ate) partes.push(Prisma.sql`criada_em <= ${f.ate}`);
  return partes.length ? Prisma.sql`where ${Prisma.join(partes, ' and ')}` : Prisma.empty;
}

/**
 * A page, newest first. The skipped rows are walked in an index of the filter (entrega_criada,
 * entrega_situacao, entrega_assinatura…, an index-only scan) and only the page's ids are joined.
 */
export function sqlDaPagina(f: FiltroDeEntregas, { pagina, tamanho }: PageRequest): Prisma.Sql {
  const skip = Math.min((pagina - 1) * tamanho, Number.MAX_SAFE_INTEGER);
  return comNomes(Prisma.sql`select id, criada_em from entrega ${condicoes(f)}
    order by criada_em desc, id desc offset ${skip} limit ${tamanho}`);
}
export const sqlDoTotal = (f: FiltroDeEntregas) =>
  Prisma.sql`select count(*)::int as total from entrega ${condicoes(f)}`;
export const sqlDoFiltro = (f: FiltroDeEntregas) =>
  comNomes(Prisma.sql`select id, criada_em from entrega ${condicoes(f)}
    order by criada_em desc, id desc limit ${FILTRO_ENTREGAS_MAX}`);

/** What resending needs to know of a delivery, its row locked until the transaction ends. */
export interface EntregaParaReenvio {
  situacao: Situacao;
  assinatura_ativa: boolean;
}

/** The deliveries of the panel (architecture §4, Entrega); the SQL is exported for the benchmark's plans. */
export function entregasRepository(db: DbClient) {
  return {
    async listar(f: FiltroDeEntregas, request: PageRequest) {
      const [itens, contagem] = await Promise.all([
        db.$queryRaw<LinhaDeEntrega[]>(sqlDaPagina(f, request)),
        db.$queryRaw<[{ total: number }]>(sqlDoTotal(f)),
      ]);
      return { itens: itens.map(dto), total: contagem[0].total };
    },

    filtrar: async (f: FiltroDeEntregas) => (await db.$queryRaw<LinhaDeEntrega[]>(sqlDoFiltro(f))).map(dto),

    async buscar(id: string, cliente: DbClient = db): Promise<EntregaDto | undefined> {
      const [linha] = await cliente.$queryRaw<LinhaDeEntrega[]>(
        comNomes(Prisma.sql`select id, criada_em from entrega where id = ${id}::uuid`),
      );
      return linha && dto(linha);
    },

    async tentativas(entregaId: string): Promise<TentativaDto[]> {
      const linhas = await db.tentativa.findMany({ where: { entregaId }, orderBy: { numero: 'asc' } });
      return linhas.map(tentativaDto);
    },

    /** Locks the delivery's row (a concurrent resend or worker update waits) and reads its subscription. */
    async travarParaReenvio(id: string, tx: Tx): Promise<EntregaParaReenvio | undefined> {
      const [linha] = await tx.$queryRaw<EntregaParaReenvio[]>`
        select en.situacao, (s.ativa and s.excluida_em is null) as assinatura_ativa
          from entrega en join assinatura s on s.id = en.assinatura_id
         where en.id = ${id}::uuid
           for update of en`;
      return linha;
    },
  };
}
export type EntregasRepository = ReturnType<typeof entregasRepository>;

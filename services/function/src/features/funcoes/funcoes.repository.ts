import type { DbClient, Tx } from '../../db';
import { Prisma } from '../../generated/prisma/client';

export interface FuncaoRow {
  id: string;
  nome: string;
  quantidade: number;
  criado_em: Date;
  atualizado_em: Date;
}

export interface Janela {
  skip: number;
  take: number;
}

/** Where and how the re-announcements of a renamed function's collaborators are published. */
export interface DestinoDosAnuncios {
  exchange: string;
  routingKey: string;
}

/** Alphabetical as a Portuguese reader expects; the id breaks ties so pages never overlap. */
const ORDEM = Prisma.sql`order by f.nome collate "pt-BR-x-icu", f.id`;

/** Case-insensitive substring of the name; strpos needs no escaping of % and _. */
const filtro = (busca?: string) =>
  busca ? Prisma.sql`where strpos(lower(f.nome), lower(${busca})) > 0` : Prisma.empty;

/** Active collaborators linked to the function (removed ones are tombstones, inactive ones not counted). */
const QUANTIDADE = Prisma.sql`(select count(*)::int from colaborador c where c.funcao_id = f.id::text and c.ativo and not c.removido)`;

const COLUNAS = Prisma.sql`f.id::text as id, f.nome, ${QUANTIDADE} as quantidade, f.criado_em, f.atualizado_em`;

/**
 * The rows of one page, counted after the page is cut: PostgreSQL would otherwise compute the
 * count of every row skipped by OFFSET too.
 */
const pagina = (busca: string | undefined, janela: Janela) =>
  Prisma.sql`select ${COLUNAS} from (select f.* from funcao f ${filtro(busca)} ${ORDEM} limit ${janela.take} offset ${janela.skip}) f ${ORDEM}`;

/** Every function takes the client or a transaction (`cliente`, the base client when absent). */
export function funcoesRepository(db: DbClient) {
  async function total(busca: string | undefined, cliente: DbClient): Promise<number> {
    const [row] = await cliente.$queryRaw<{ n: number }[]>`select count(*)::int as n from funcao f ${filtro(busca)}`;
    return row?.n ?? 0;
  }

  return {
    async listar(
      busca: string | undefined,
      janela: Janela,
      cliente: DbClient = db,
    ): Promise<{ itens: FuncaoRow[]; total: number }> {
      const [itens, n] = await Promise.all([
        cliente.$queryRaw<FuncaoRow[]>(pagina(busca, janela)),
        total(busca, cliente),
      ]);
      return { itens, total: n };
    },

    async resumos(
      busca: string | undefined,
      janela: Janela,
      cliente: DbClient = db,
    ): Promise<{ itens: { id: string; nome: string }[]; total: number }> {
      const [itens, n] = await Promise.all([
        cliente.$queryRaw<
          { id: string; nome: string }[]
        >`select f.id::text as id, f.nome from funcao f ${filtro(busca)} ${ORDEM} limit ${janela.take} offset ${janela.skip}`,
        total(busca, cliente),
      ]);
      return { itens, total: n };
    },

    todas(busca: string | undefined, cliente: DbClient = db): Promise<FuncaoRow[]> {
      return cliente.$queryRaw<FuncaoRow[]>`select ${COLUNAS} from funcao f ${filtro(busca)} ${ORDEM}`;
    },

    async buscar(id: string, cliente: DbClient = db): Promise<FuncaoRow | undefined> {
      const [row] = await cliente.$queryRaw<FuncaoRow[]>`select ${COLUNAS} from funcao f where f.id = ${id}::uuid`;
      return row;
    },

    /** Inserts; a name taken (as nomeChave compares) throws Prisma's P2002 (the unique index decides). */
    async criar(id: string, nome: string, agora: Date, cliente: DbClient = db): Promise<void> {
      await cliente.funcao.create({ data: { id, nome, criadoEm: agora, atualizadoEm: agora } });
    },

    /** The function's current name, its row locked until the transaction ends; undefined when absent. */
    async travar(id: string, tx: Tx): Promise<string | undefined> {
      const [atual] = await tx.$queryRaw<{ nome: string }[]>`select nome from funcao where id = ${id}::uuid for update`;
      return atual?.nome;
    },

    /** Renames; a name taken throws Prisma's P2002. */
    async renomear(id: string, nome: string, agora: Date, cliente: DbClient = db): Promise<void> {
      await cliente.funcao.update({ where: { id }, data: { nome, atualizadoEm: agora } });
    },

    anunciar,
  };
}

/**
 * One outbox row per collaborator of the function (removed ones excepted), in one statement,
 * whatever their number; returns how many. Meant for the rename's own transaction.
 */
function anunciar(
  id: string,
  nome: string,
  agora: Date,
  destino: DestinoDosAnuncios,
  cliente: DbClient,
): Promise<number> {
  // The body is glued together as JSON text: the fixed parts once, here, and per row the
  // collaborator's fragment kept by the projection (see colaborador.anuncio). Three times cheaper
  // than jsonb_build_object for 10,000 rows, which keeps a large rename's answer within budget.
  const cabecalho = JSON.stringify({
    aplicativo_client_id: 'identidade',
    tipo_de_evento_nome: 'colaborador.atualizado',
    versao_do_esquema: 1,
    ocorrido_em: agora.toISOString(),
  }).slice(1, -1);
  const funcao = `"funcao":${JSON.stringify({ id, nome })}}}`;
  return cliente.$executeRaw`
    insert into outbox (id, exchange, routing_key, message_id, body, criado_em)
    select a.id, ${destino.exchange}, ${destino.routingKey}, a.id::text,
      ('{"id":"' || a.id::text || '",' || ${cabecalho}::text || ',"entidade_id":' || to_json(a.termoauth_id)::text
        || ',"dados":{' || a.anuncio || ',' || ${funcao}::text)::json,
      ${agora}
    from (select uuid_v7() as id, c.termoauth_id, c.anuncio
            from colaborador c where c.funcao_id = ${id}::uuid::text and not c.removido) a`;
}

export type FuncoesRepository = ReturnType<typeof funcoesRepository>;

import type { Db } from '../../db';
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

const ORDEM = Prisma.sql`order by f.nome collate "pt-BR-x-icu", f.id`;

/** Case-insensitive substring of the name; strpos needs no escaping of % and _. */
const filtro = (busca?: string) => (busca ? Prisma.sql`where strpos(lower(f.nome), lower(${busca})) > 0` : Prisma.empty);

/** Active collaborators linked to the function (removed ones are tombstones, inactive ones not counted). */
const QUANTIDADE = Prisma.sql`(select count(*)::int from colaborador c where c.funcao_id = f.id::text and c.ativo and not c.removido)`;

const COLUNAS = Prisma.sql`f.id::text as id, f.nome, ${QUANTIDADE} as quantidade, f.criado_em, f.atualizado_em`;

export function funcoesRepository(db: Db) {
  async function total(busca?: string): Promise<number> {
    const [row] = await db.$queryRaw<{ n: number }[]>`select count(*)::int as n from funcao f ${filtro(busca)}`;
    return row?.n ?? 0;
  }

  return {
    async listar(busca: string | undefined, janela: Janela): Promise<{ itens: FuncaoRow[]; total: number }> {
      const [itens, n] = await Promise.all([
        db.$queryRaw<FuncaoRow[]>`select ${COLUNAS} from funcao f ${filtro(busca)} ${ORDEM} limit ${janela.take} offset ${janela.skip}`,
        total(busca),
      ]);
      return { itens, total: n };
    },

    async resumos(busca: string | undefined, janela: Janela): Promise<{ itens: { id: string; nome: string }[]; total: number }> {
      const [itens, n] = await Promise.all([
        db.$queryRaw<{ id: string; nome: string }[]>`select f.id::text as id, f.nome from funcao f ${filtro(busca)} ${ORDEM} limit ${janela.take} offset ${janela.skip}`,
        total(busca),
      ]);
      return { itens, total: n };
    },

    todas(busca: string | undefined): Promise<FuncaoRow[]> {
      return db.$queryRaw<FuncaoRow[]>`select ${COLUNAS} from funcao f ${filtro(busca)} ${ORDEM}`;
    },

    async buscar(id: string): Promise<FuncaoRow | undefined> {
      const [row] = await db.$queryRaw<FuncaoRow[]>`select ${COLUNAS} from funcao f where f.id = ${id}::uuid`;
      return row;
    },

    /** Inserts; a name taken without regard to case throws Prisma's P2002 (the unique index decides). */
    async criar(id: string, nome: string, agora: Date): Promise<void> {
      await db.funcao.create({ data: { id, nome, criadoEm: agora, atualizadoEm: agora } });
    },

    /**
     * Renames and, in the same transaction, writes one outbox row per collaborator of the function
     * (one INSERT … SELECT, whatever their number). Returns undefined when the function does not
     * exist, and how many were announced otherwise (0 when the name did not change).
     */
    async renomear(id: string, nome: string, agora: Date, destino: DestinoDosAnuncios): Promise<number | undefined> {
      return db.$transaction(async (tx) => {
        const [atual] = await tx.$queryRaw<{ nome: string }[]>`select nome from funcao where id = ${id}::uuid for update`;
        if (!atual) return undefined;
        if (atual.nome === nome) return 0;
        await tx.funcao.update({ where: { id }, data: { nome, atualizadoEm: agora } });
        return tx.$executeRaw`
          insert into outbox (id, exchange, routing_key, message_id, body, criado_em)
          select a.id, ${destino.exchange}, ${destino.routingKey}, a.id::text,
            jsonb_build_object(
              'id', a.id::text,
              'aplicativo_client_id', 'identidade',
              'tipo_de_evento_nome', 'colaborador.atualizado',
              'versao_do_esquema', 1,
              'entidade_id', a.termoauth_id,
              'ocorrido_em', ${agora.toISOString()}::text,
              'dados', jsonb_build_object(
                'termoauth_id', a.termoauth_id,
                'email', a.email,
                'nome', a.nome,
                'ativo', a.ativo,
                'funcao', jsonb_build_object('id', ${id}::text, 'nome', ${nome}::text))),
            ${agora}
          from (select uuid_v7() as id, c.termoauth_id, c.email, c.nome, c.ativo
                  from colaborador c where c.funcao_id = ${id} and not c.removido) a`;
      });
    },
  };
}

export type FuncoesRepository = ReturnType<typeof funcoesRepository>;

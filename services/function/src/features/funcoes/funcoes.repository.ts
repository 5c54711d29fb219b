import { executeOnPrisma, runOnPrisma } from '@hub/database';
import type { DbClient, Tx } from '../../db';
import {
  FUNCAO_ANUNCIAR,
  FUNCAO_BUSCAR,
  FUNCAO_PAGINA,
  FUNCAO_RESUMOS,
  FUNCAO_TODAS,
  FUNCAO_TOTAL,
  FUNCAO_TRAVAR,
} from './funcoes.sql';

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

/** A search as the statements take it: none (every function) is null. */
const buscaOuNulo = (busca?: string) => busca || null;

/** Every function takes the client or a transaction (`cliente`, the base client when absent). */
export function funcoesRepository(db: DbClient) {
  async function total(busca: string | undefined, cliente: DbClient): Promise<number> {
    const [row] = await runOnPrisma(cliente, FUNCAO_TOTAL, [buscaOuNulo(busca)]);
    return row?.n ?? 0;
  }

  return {
    async listar(
      busca: string | undefined,
      janela: Janela,
      cliente: DbClient = db,
    ): Promise<{ itens: FuncaoRow[]; total: number }> {
      const [itens, n] = await Promise.all([
        runOnPrisma(cliente, FUNCAO_PAGINA, [buscaOuNulo(busca), janela.take, janela.skip]),
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
        runOnPrisma(cliente, FUNCAO_RESUMOS, [buscaOuNulo(busca), janela.take, janela.skip]),
        total(busca, cliente),
      ]);
      return { itens, total: n };
    },

    todas(busca: string | undefined, cliente: DbClient = db): Promise<FuncaoRow[]> {
      return runOnPrisma(cliente, FUNCAO_TODAS, [buscaOuNulo(busca)]);
    },

    async buscar(id: string, cliente: DbClient = db): Promise<FuncaoRow | undefined> {
      const [row] = await runOnPrisma(cliente, FUNCAO_BUSCAR, [id]);
      return row;
    },

    /** Inserts; a name taken (as nomeChave compares) throws Prisma's P2002 (the unique index decides). */
    async criar(id: string, nome: string, agora: Date, cliente: DbClient = db): Promise<void> {
      await cliente.funcao.create({ data: { id, nome, criadoEm: agora, atualizadoEm: agora } });
    },

    /** The function's current name, its row locked until the transaction ends; undefined when absent. */
    async travar(id: string, tx: Tx): Promise<string | undefined> {
      const [atual] = await runOnPrisma(tx, FUNCAO_TRAVAR, [id]);
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
  return executeOnPrisma(cliente, FUNCAO_ANUNCIAR, [
    id,
    destino.exchange,
    destino.routingKey,
    agora,
    cabecalho,
    funcao,
  ]);
}

export type FuncoesRepository = ReturnType<typeof funcoesRepository>;

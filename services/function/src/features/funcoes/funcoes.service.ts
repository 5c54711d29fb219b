import { isUniqueViolation, uuidv7 } from '@hub/database';
import { conflict, notFound, type Pagina, type PageRequest, page, skipTake } from '@hub/http';
import type { Logger } from '@hub/log';
import { type DbClient, transacao } from '../../db';
import type { DestinoDosAnuncios, FuncaoRow, FuncoesRepository } from './funcoes.repository';
import type { FuncaoDto } from './funcoes.schemas';

export const toFuncao = (row: FuncaoRow): FuncaoDto => ({
  id: row.id,
  nome: row.nome,
  quantidade_de_colaboradores: row.quantidade,
  criado_em: row.criado_em.toISOString(),
  atualizado_em: row.atualizado_em.toISOString(),
});

const nomeRepetido = (nome: string) =>
  conflict('funcao_duplicada', `a function named "${nome}" already exists (names are compared without regard to case)`);

/** The rules of the function registry (area B), in its own words; no HTTP, no SQL. */
export interface FuncoesServiceDeps {
  db: DbClient;
  repo: FuncoesRepository;
  /** Where changes are announced (the outbox's exchange and routing keys). */
  destino: DestinoDosAnuncios;
  logger: Logger;
}

export function funcoesService({ db, repo, destino, logger }: FuncoesServiceDeps) {
  async function buscar(id: string): Promise<FuncaoDto> {
    const row = await repo.buscar(id);
    if (!row) throw notFound('function');
    return toFuncao(row);
  }

  return {
    buscar,

    async listar(busca: string | undefined, pedido: PageRequest): Promise<Pagina<FuncaoDto>> {
      const { itens, total } = await repo.listar(busca, skipTake(pedido));
      return page(itens.map(toFuncao), pedido, total);
    },

    async autocomplete(busca: string | undefined, pedido: PageRequest): Promise<Pagina<{ id: string; nome: string }>> {
      const { itens, total } = await repo.resumos(busca, skipTake(pedido));
      return page(itens, pedido, total);
    },

    async filtrar(busca: string | undefined): Promise<FuncaoDto[]> {
      return (await repo.todas(busca)).map(toFuncao);
    },

    async criar(nome: string): Promise<FuncaoDto> {
      const id = uuidv7();
      try {
        await repo.criar(id, nome, new Date());
      } catch (error) {
        if (isUniqueViolation(error)) throw nomeRepetido(nome);
        throw error;
      }
      return buscar(id);
    },

    /**
     * Renames; every collaborator of the function is announced again (their events carry the
     * function's name), written to the outbox in the rename's own transaction.
     */
    async atualizar(id: string, nome: string | null | undefined): Promise<FuncaoDto> {
      if (nome === undefined || nome === null) return buscar(id);
      const agora = new Date();
      let renomeada: { funcao: FuncaoRow; anunciados: number };
      try {
        renomeada = await transacao(db, async (tx) => {
          const atual = await repo.travar(id, tx);
          if (atual === undefined) throw notFound('function');
          let anunciados = 0;
          if (atual !== nome) {
            await repo.renomear(id, nome, agora, tx);
            anunciados = await repo.anunciar(id, nome, agora, destino, tx);
          }
          // read before the commit, so the answer is ready before the relay wakes up
          const funcao = await repo.buscar(id, tx);
          return { funcao: funcao!, anunciados };
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw nomeRepetido(nome);
        throw error;
      }
      if (renomeada.anunciados > 0)
        logger.info(
          { funcao_id: id, anunciados: renomeada.anunciados },
          'function renamed; collaborators re-announced',
        );
      return toFuncao(renomeada.funcao);
    },
  };
}

export type FuncoesService = ReturnType<typeof funcoesService>;

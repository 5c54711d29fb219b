import { uuidv7, isUniqueViolation } from '@hub/database';
import { conflict, notFound, type PageRequest, page } from '@hub/http';
import { type DbClient, transacao } from '../../db';
import type { Aplicativo } from '@hub/hub-data';
import { iso } from '../../schemas';
import type { AplicativosRepository, FiltroDeAplicativos } from './aplicativos.repository';
import type { AplicativoDto } from './aplicativos.schemas';

export const aplicativoDto = (a: Aplicativo): AplicativoDto => ({
  id: a.id,
  nome: a.nome,
  client_id: a.clientId,
  ativo: a.ativo,
  criado_em: iso(a.criadoEm),
  atualizado_em: iso(a.atualizadoEm),
});

/** Applications: publishers (owners of event types) and subscribers, named by their client id. */
export interface AplicativosServiceDeps {
  db: DbClient;
  repository: AplicativosRepository;
}

export function aplicativosService({ db, repository }: AplicativosServiceDeps) {
  async function existente(id: string, cliente: DbClient = db): Promise<Aplicativo> {
    const aplicativo = await repository.buscar(id, cliente);
    if (!aplicativo) throw notFound('application');
    return aplicativo;
  }

  return {
    async listar(filtro: FiltroDeAplicativos, request: PageRequest) {
      const { itens, total } = await repository.listar(filtro, request);
      return page(itens.map(aplicativoDto), request, total);
    },

    async criar(input: { nome: string; client_id: string }) {
      const agora = new Date();
      try {
        const criado = await repository.criar({
          id: uuidv7(),
          nome: input.nome,
          clientId: input.client_id,
          ativo: true,
          criadoEm: agora,
          atualizadoEm: agora,
        });
        return aplicativoDto(criado);
      } catch (error) {
        if (isUniqueViolation(error))
          throw conflict('client_id_em_uso', `an application with client_id ${input.client_id} exists`);
        throw error;
      }
    },

    buscar: async (id: string) => aplicativoDto(await existente(id)),

    atualizar: (id: string, input: { nome?: string | null; ativo?: boolean | null }) =>
      transacao(db, async (tx) => {
        const atual = await existente(id, tx);
        const changes = {
          ...(input.nome == null ? {} : { nome: input.nome }),
          ...(input.ativo == null ? {} : { ativo: input.ativo }),
        };
        if (Object.keys(changes).length === 0) return aplicativoDto(atual);
        return aplicativoDto(await repository.atualizar(id, { ...changes, atualizadoEm: new Date() }, tx));
      }),
  };
}
export type AplicativosService = ReturnType<typeof aplicativosService>;

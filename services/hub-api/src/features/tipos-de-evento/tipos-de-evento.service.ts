import { isUniqueViolation, uuidv7 } from '@hub/database';
import { conflict, invalidField, notFound, type PageRequest, page } from '@hub/http';
import { type DbClient, isForeignKeyViolation, transacao } from '../../db';
import { iso } from '../../schemas';
import type { AplicativosRepository } from '../aplicativos/aplicativos.repository';
import type { FiltroDeTipos, TipoComAplicativo, TiposRepository } from './tipos-de-evento.repository';
import type { Compatibilidade } from '../compatibilidade/compatibilidade';
import type { TipoDto } from './tipos-de-evento.schemas';

export const tipoDto = (t: TipoComAplicativo): TipoDto => ({
  id: t.id,
  nome: t.nome,
  descricao: t.descricao,
  aplicativo_id: t.aplicativoId,
  aplicativo_nome: t.aplicativo.nome,
  ativo: t.ativo,
  retencao_em_dias: t.retencaoEmDias,
  compatibilidade: t.compatibilidade as Compatibilidade,
  criado_em: iso(t.criadoEm),
  atualizado_em: iso(t.atualizadoEm),
});

const aplicativoInexistente = () =>
  invalidField('/aplicativo_id', 'aplicativo_inexistente', 'no application has this id');

/** Event types: a unique dotted name, the owning (only publishing) application, a retention. */
export interface TiposServiceDeps {
  db: DbClient;
  repository: TiposRepository;
  aplicativos: AplicativosRepository;
}

export function tiposService({ db, repository, aplicativos }: TiposServiceDeps) {
  async function existente(id: string, cliente: DbClient = db): Promise<TipoComAplicativo> {
    const tipo = await repository.buscar(id, cliente);
    if (!tipo) throw notFound('event type');
    return tipo;
  }

  return {
    async listar(filtro: FiltroDeTipos, request: PageRequest) {
      const { itens, total } = await repository.listar(filtro, request);
      return page(itens.map(tipoDto), request, total);
    },

    async autocomplete(filtro: FiltroDeTipos, request: PageRequest) {
      const { itens, total } = await repository.autocomplete(filtro, request);
      return page(itens, request, total);
    },

    filtrar: async (filtro: FiltroDeTipos) => (await repository.filtrar(filtro)).map(tipoDto),

    buscar: async (id: string) => tipoDto(await existente(id)),

    async criar(input: {
      nome: string;
      descricao?: string | null;
      aplicativo_id: string;
      retencao_em_dias: number;
      compatibilidade: Compatibilidade;
    }) {
      const agora = new Date();
      try {
        return await transacao(db, async (tx) => {
          if (!(await aplicativos.buscar(input.aplicativo_id, tx))) throw aplicativoInexistente();
          const criado = await repository.criar(
            {
              id: uuidv7(),
              nome: input.nome,
              descricao: input.descricao ?? null,
              aplicativoId: input.aplicativo_id,
              ativo: true,
              retencaoEmDias: input.retencao_em_dias,
              compatibilidade: input.compatibilidade,
              criadoEm: agora,
              atualizadoEm: agora,
            },
            tx,
          );
          return tipoDto(criado);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict('nome_em_uso', `an event type named ${input.nome} exists`);
        if (isForeignKeyViolation(error)) throw aplicativoInexistente();
        throw error;
      }
    },

    atualizar: (
      id: string,
      input: {
        descricao?: string | null;
        ativo?: boolean | null;
        retencao_em_dias?: number | null;
        compatibilidade?: Compatibilidade | null;
      },
    ) =>
      transacao(db, async (tx) => {
        const atual = await existente(id, tx);
        const changes = {
          ...(input.descricao === undefined ? {} : { descricao: input.descricao }),
          ...(input.ativo == null ? {} : { ativo: input.ativo }),
          ...(input.retencao_em_dias == null ? {} : { retencaoEmDias: input.retencao_em_dias }),
          // Applies to the next version: the versions already stored are not checked again.
          ...(input.compatibilidade == null ? {} : { compatibilidade: input.compatibilidade }),
        };
        if (Object.keys(changes).length === 0) return tipoDto(atual);
        return tipoDto(await repository.atualizar(id, { ...changes, atualizadoEm: new Date() }, tx));
      }),

    /**
     * Only a type nothing refers to (no schema version, no subscription, no event) can go. The type
     * is locked first, so a version being created for it at the same moment waits (or is waited for).
     */
    async excluir(id: string) {
      try {
        await transacao(db, async (tx) => {
          if (!(await repository.travar(id, tx))) throw notFound('event type');
          const { versoes, assinaturas } = await repository.referencias(id, tx);
          if (versoes > 0 || assinaturas > 0) {
            throw conflict(
              'tipo_de_evento_em_uso',
              `the event type has ${versoes} schema version(s) and ${assinaturas} subscription(s); switch it off instead`,
            );
          }
          await repository.excluir(id, tx);
        });
      } catch (error) {
        if (isForeignKeyViolation(error))
          throw conflict('tipo_de_evento_em_uso', 'something refers to the event type; switch it off instead');
        throw error;
      }
    },
  };
}
export type TiposService = ReturnType<typeof tiposService>;

import { isUniqueViolation, uuidv7 } from '@hub/database';
import { conflict, invalidField, notFound, type PageRequest, page } from '@hub/http';
import { isForeignKeyViolation } from '../../db';
import { iso } from '../../schemas';
import type { AplicativosRepository } from '../aplicativos/aplicativos.repository';
import type { FiltroDeTipos, TipoComAplicativo, TiposRepository } from './tipos-de-evento.repository';
import type { TipoDto } from './tipos-de-evento.schemas';

export const tipoDto = (t: TipoComAplicativo): TipoDto => ({
  id: t.id,
  nome: t.nome,
  descricao: t.descricao,
  aplicativo_id: t.aplicativoId,
  aplicativo_nome: t.aplicativo.nome,
  ativo: t.ativo,
  retencao_em_dias: t.retencaoEmDias,
  criado_em: iso(t.criadoEm),
  atualizado_em: iso(t.atualizadoEm),
});

const aplicativoInexistente = () =>
  invalidField('/aplicativo_id', 'aplicativo_inexistente', 'no application has this id');

/** Event types: a unique dotted name, the owning (only publishing) application, a retention. */
export function tiposService(repository: TiposRepository, aplicativos: AplicativosRepository) {
  async function existente(id: string): Promise<TipoComAplicativo> {
    const tipo = await repository.buscar(id);
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

    async criar(input: { nome: string; descricao?: string | null; aplicativo_id: string; retencao_em_dias: number }) {
      if (!(await aplicativos.buscar(input.aplicativo_id))) throw aplicativoInexistente();
      const agora = new Date();
      try {
        const criado = await repository.criar({
          id: uuidv7(),
          nome: input.nome,
          descricao: input.descricao ?? null,
          aplicativoId: input.aplicativo_id,
          ativo: true,
          retencaoEmDias: input.retencao_em_dias,
          criadoEm: agora,
          atualizadoEm: agora,
        });
        return tipoDto(criado);
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict('nome_em_uso', `an event type named ${input.nome} exists`);
        if (isForeignKeyViolation(error)) throw aplicativoInexistente();
        throw error;
      }
    },

    async atualizar(
      id: string,
      input: { descricao?: string | null; ativo?: boolean | null; retencao_em_dias?: number | null },
    ) {
      await existente(id);
      const changes = {
        ...(input.descricao === undefined ? {} : { descricao: input.descricao }),
        ...(input.ativo == null ? {} : { ativo: input.ativo }),
        ...(input.retencao_em_dias == null ? {} : { retencaoEmDias: input.retencao_em_dias }),
      };
      if (Object.keys(changes).length === 0) return tipoDto(await existente(id));
      return tipoDto(await repository.atualizar(id, { ...changes, atualizadoEm: new Date() }));
    },

    /** Only a type nothing refers to (no schema version, no subscription, no event) can go. */
    async excluir(id: string) {
      await existente(id);
      const { versoes, assinaturas } = await repository.referencias(id);
      if (versoes > 0 || assinaturas > 0) {
        throw conflict(
          'tipo_de_evento_em_uso',
          `the event type has ${versoes} schema version(s) and ${assinaturas} subscription(s); switch it off instead`,
        );
      }
      try {
        await repository.excluir(id);
      } catch (error) {
        if (isForeignKeyViolation(error))
          throw conflict('tipo_de_evento_em_uso', 'something refers to the event type; switch it off instead');
        throw error;
      }
    },
  };
}
export type TiposService = ReturnType<typeof tiposService>;

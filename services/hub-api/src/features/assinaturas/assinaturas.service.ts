import { isUniqueViolation, uuidv7 } from '@hub/database';
import { conflict, invalidField, notFound, type PageRequest, page } from '@hub/http';
import { isForeignKeyViolation } from '../../db';
import { iso } from '../../schemas';
import type { AplicativosRepository } from '../aplicativos/aplicativos.repository';
import type { TiposRepository } from '../tipos-de-evento/tipos-de-evento.repository';
import type { VersoesRepository } from '../versoes-de-esquema/versoes-de-esquema.repository';
import type { AssinaturaComNomes, AssinaturasRepository, FiltroDeAssinaturas } from './assinaturas.repository';
import type { AssinaturaDto } from './assinaturas.schemas';

export const assinaturaDto = (a: AssinaturaComNomes): AssinaturaDto => ({
  id: a.id,
  aplicativo_assinante_id: a.aplicativoAssinanteId,
  aplicativo_assinante_nome: a.aplicativoAssinante.nome,
  tipo_de_evento_id: a.tipoDeEventoId,
  tipo_de_evento_nome: a.versao.tipoDeEvento.nome,
  versao_do_esquema: a.versaoDoEsquema,
  url_de_destino: a.urlDeDestino,
  maximo_de_tentativas: a.maximoDeTentativas,
  ativa: a.ativa,
  criado_em: iso(a.criadoEm),
  atualizado_em: iso(a.atualizadoEm),
});

export interface AssinaturasDeps {
  assinaturas: AssinaturasRepository;
  aplicativos: AplicativosRepository;
  tipos: TiposRepository;
  versoes: VersoesRepository;
  /** Refuses (throws a 422) a destination deliveries may not go to. */
  verificarDestino: (url: string) => Promise<void>;
}

const duplicada = () =>
  conflict('assinatura_duplicada', 'this application already subscribes to this type and version at this URL');

/** Subscriptions: an application receives the events of one type and schema version at a URL. */
export function assinaturasService(deps: AssinaturasDeps) {
  const { assinaturas } = deps;

  async function existente(id: string): Promise<AssinaturaComNomes> {
    const assinatura = await assinaturas.buscar(id);
    if (!assinatura) throw notFound('subscription');
    return assinatura;
  }

  return {
    async listar(filtro: FiltroDeAssinaturas, request: PageRequest) {
      const { itens, total } = await assinaturas.listar(filtro, request);
      return page(itens.map(assinaturaDto), request, total);
    },

    async autocomplete(filtro: FiltroDeAssinaturas, request: PageRequest) {
      const { itens, total } = await assinaturas.listar(filtro, request);
      const resumo = itens
        .map(assinaturaDto)
        .map(({ id, aplicativo_assinante_nome, tipo_de_evento_nome, versao_do_esquema, url_de_destino }) => ({
          id,
          aplicativo_assinante_nome,
          tipo_de_evento_nome,
          versao_do_esquema,
          url_de_destino,
        }));
      return page(resumo, request, total);
    },

    filtrar: async (filtro: FiltroDeAssinaturas) => (await assinaturas.filtrar(filtro)).map(assinaturaDto),

    buscar: async (id: string) => assinaturaDto(await existente(id)),

    async criar(input: {
      aplicativo_assinante_id: string;
      tipo_de_evento_id: string;
      versao_do_esquema: number;
      url_de_destino: string;
      maximo_de_tentativas: number;
    }) {
      if (!(await deps.aplicativos.buscar(input.aplicativo_assinante_id))) {
        throw invalidField('/aplicativo_assinante_id', 'aplicativo_inexistente', 'no application has this id');
      }
      if (!(await deps.tipos.buscar(input.tipo_de_evento_id))) {
        throw invalidField('/tipo_de_evento_id', 'tipo_de_evento_inexistente', 'no event type has this id');
      }
      if (!(await deps.versoes.buscarPorNumero(input.tipo_de_evento_id, input.versao_do_esquema))) {
        throw invalidField(
          '/versao_do_esquema',
          'versao_inexistente',
          `the event type has no schema version ${input.versao_do_esquema}`,
        );
      }
      await deps.verificarDestino(input.url_de_destino);
      const agora = new Date();
      try {
        const criada = await assinaturas.criar({
          id: uuidv7(),
          aplicativoAssinanteId: input.aplicativo_assinante_id,
          tipoDeEventoId: input.tipo_de_evento_id,
          versaoDoEsquema: input.versao_do_esquema,
          urlDeDestino: input.url_de_destino,
          maximoDeTentativas: input.maximo_de_tentativas,
          ativa: true,
          criadoEm: agora,
          atualizadoEm: agora,
        });
        return assinaturaDto(criada);
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicada();
        if (isForeignKeyViolation(error))
          throw invalidField('', 'referencia_inexistente', 'the application, type or version no longer exists');
        throw error;
      }
    },

    async atualizar(
      id: string,
      input: { url_de_destino?: string | null; ativa?: boolean | null; maximo_de_tentativas?: number | null },
    ) {
      await existente(id);
      if (input.url_de_destino != null) await deps.verificarDestino(input.url_de_destino);
      const changes = {
        ...(input.url_de_destino == null ? {} : { urlDeDestino: input.url_de_destino }),
        ...(input.ativa == null ? {} : { ativa: input.ativa }),
        ...(input.maximo_de_tentativas == null ? {} : { maximoDeTentativas: input.maximo_de_tentativas }),
      };
      if (Object.keys(changes).length === 0) return assinaturaDto(await existente(id));
      try {
        return assinaturaDto(await assinaturas.atualizar(id, { ...changes, atualizadoEm: new Date() }));
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicada();
        throw error;
      }
    },

    async excluir(id: string) {
      await existente(id);
      await assinaturas.excluir(id, new Date());
    },
  };
}
export type AssinaturasService = ReturnType<typeof assinaturasService>;

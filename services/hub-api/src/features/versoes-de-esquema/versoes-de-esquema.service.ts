import { uuidv7 } from '@hub/database';
import { AppError, invalidField, notFound, type PageRequest, page, unprocessable } from '@hub/http';
import { type DbClient, transacao } from '../../db';
import type { Prisma } from '@hub/hub-data';
import { iso } from '../../schemas';
import type { EsquemaVerificado, ResultadoDaValidacao, ValidadorDeEsquemas } from '../../validation/esquemas';
import {
  type Compatibilidade,
  type ResultadoDaCompatibilidade,
  verificarCompatibilidade,
} from '../compatibilidade/compatibilidade';
import type { Esquema } from '../compatibilidade/no';
import type { TiposRepository } from '../tipos-de-evento/tipos-de-evento.repository';
import type { FiltroDeVersoes, VersaoComTipo, VersoesRepository } from './versoes-de-esquema.repository';
import type { VersaoDto } from './versoes-de-esquema.schemas';

export const versaoDto = (v: VersaoComTipo): VersaoDto => ({
  id: v.id,
  tipo_de_evento_id: v.tipoDeEventoId,
  tipo_de_evento_nome: v.tipoDeEvento.nome,
  versao: v.versao,
  esquema: v.esquema as Record<string, unknown>,
  ativa: v.ativa,
  descricao: v.descricao,
  criado_em: iso(v.criadoEm),
  atualizado_em: iso(v.atualizadoEm),
});

/** The answer of the check of a new schema against the type's latest version. */
export interface Verificacao extends ResultadoDaCompatibilidade {
  compatibilidade: Compatibilidade;
  versao_anterior: number | null;
  motivo: string | null;
}

function comparar(
  anterior: { versao: number; esquema: unknown } | null,
  esquema: Record<string, unknown>,
  regra: Compatibilidade,
): Verificacao {
  const base = { compatibilidade: regra, versao_anterior: anterior?.versao ?? null };
  if (regra === 'none') return { ...base, compativel: true, erros: [], motivo: 'the rule is none: nothing is checked' };
  if (!anterior) {
    return {
      ...base,
      compativel: true,
      erros: [],
      motivo: 'the type has no version yet: there is nothing to compare with',
    };
  }
  return { ...base, ...verificarCompatibilidade(anterior.esquema as Esquema, esquema, regra), motivo: null };
}

const incompativel = (v: Verificacao) =>
  new AppError(
    409,
    'esquema_incompativel',
    `the schema breaks the type's ${v.compatibilidade} compatibility with version ${v.versao_anterior}`,
    v.erros,
  );

const tipoInexistente = () =>
  invalidField('/tipo_de_evento_id', 'tipo_de_evento_inexistente', 'no event type has this id');

/**
 * Schema versions: numbered 1, 2, 3… per type, checked by ajv (strict) when created and never
 * changed afterwards; a version can be switched off (publication refuses it) and on again.
 */
export interface VersoesServiceDeps {
  db: DbClient;
  versoes: VersoesRepository;
  tipos: TiposRepository;
  /** Checks and compiles schemas in its worker threads, under HUB_SCHEMA_COMPILE_LIMIT (validation/). */
  validador: ValidadorDeEsquemas;
}

/** The refusal of a schema that `verificarEsquema` did not accept (past the limit, or not valid). */
const esquemaInvalido = ({ erros, excedeu }: EsquemaVerificado) =>
  unprocessable(
    'esquema_invalido',
    excedeu ? `the JSON Schema ${erros[0]?.mensagem}` : 'the JSON Schema is not valid (ajv, strict mode)',
    erros,
  );

export function versoesService({ db, versoes: repository, tipos, validador }: VersoesServiceDeps) {
  async function existente(id: string, cliente: DbClient = db): Promise<VersaoComTipo> {
    const versao = await repository.buscar(id, cliente);
    if (!versao) throw notFound('schema version');
    return versao;
  }

  return {
    async listar(filtro: FiltroDeVersoes, request: PageRequest) {
      const { itens, total } = await repository.listar(filtro, request);
      return page(itens.map(versaoDto), request, total);
    },

    async autocomplete(filtro: FiltroDeVersoes, request: PageRequest) {
      const { itens, total } = await repository.autocomplete(filtro, request);
      const resumo = itens.map((v) => ({
        id: v.id,
        tipo_de_evento_id: v.tipoDeEventoId,
        tipo_de_evento_nome: v.tipoDeEvento.nome,
        versao: v.versao,
      }));
      return page(resumo, request, total);
    },

    filtrar: async (filtro: FiltroDeVersoes) => (await repository.filtrar(filtro)).map(versaoDto),

    buscar: async (id: string) => versaoDto(await existente(id)),

    async criar(input: { tipo_de_evento_id: string; esquema: Record<string, unknown>; descricao?: string | null }) {
      const verificado = await validador.verificarEsquema(input.esquema);
      const compilado = verificado.validador;
      if (!compilado) throw esquemaInvalido(verificado);
      const agora = new Date();
      // The type's row stays locked until commit, so two creations at once get 1 and 2.
      const criada = await transacao(db, async (tx) => {
        if (!(await tipos.travar(input.tipo_de_evento_id, tx))) throw tipoInexistente();
        const tipo = await tipos.buscar(input.tipo_de_evento_id, tx);
        const regra = (tipo?.compatibilidade ?? 'none') as Compatibilidade;
        const verificacao = comparar(await repository.ultima(input.tipo_de_evento_id, tx), input.esquema, regra);
        if (!verificacao.compativel) throw incompativel(verificacao);
        return repository.criar(
          {
            id: uuidv7(),
            tipoDeEventoId: input.tipo_de_evento_id,
            versao: await repository.proximoNumero(input.tipo_de_evento_id, tx),
            esquema: input.esquema as Prisma.InputJsonValue,
            descricao: input.descricao ?? null,
            ativa: true,
            criadoEm: agora,
            atualizadoEm: agora,
          },
          tx,
        );
      });
      validador.lembrar(criada.id, compilado);
      return versaoDto(criada);
    },

    /** The check POST /versao-de-esquema makes, without storing anything. */
    async verificarCompatibilidade(input: {
      tipo_de_evento_id: string;
      esquema: Record<string, unknown>;
      compatibilidade?: Compatibilidade;
    }): Promise<Verificacao> {
      const tipo = await tipos.buscar(input.tipo_de_evento_id);
      if (!tipo) throw notFound('event type');
      const verificado = await validador.verificarEsquema(input.esquema);
      if (!verificado.validador) throw esquemaInvalido(verificado);
      const regra = input.compatibilidade ?? (tipo.compatibilidade as Compatibilidade);
      return comparar(await repository.ultima(tipo.id), input.esquema, regra);
    },

    atualizar: (id: string, input: { ativa?: boolean | null; descricao?: string | null }) =>
      transacao(db, async (tx) => {
        const atual = await existente(id, tx);
        const changes = {
          ...(input.ativa == null ? {} : { ativa: input.ativa }),
          ...(input.descricao === undefined ? {} : { descricao: input.descricao }),
        };
        if (Object.keys(changes).length === 0) return versaoDto(atual);
        return versaoDto(await repository.atualizar(id, { ...changes, atualizadoEm: new Date() }, tx));
      }),

    /** Checks sample `dados` exactly as publication will. */
    async validar(id: string, dados: unknown): Promise<ResultadoDaValidacao> {
      const versao = await existente(id);
      if (dados === undefined) throw invalidField('/dados', 'dados_invalidos', 'dados is required (any JSON value)');
      return validador.validarDados({ id: versao.id, esquema: versao.esquema }, dados);
    },
  };
}
export type VersoesService = ReturnType<typeof versoesService>;

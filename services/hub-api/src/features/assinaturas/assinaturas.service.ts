import { isUniqueViolation, uuidv7 } from '@hub/database';
import { conflict, invalidField, notFound, type PageRequest, page } from '@hub/http';
import { Prisma } from '@hub/hub-data';
import { type DbClient, isForeignKeyViolation, transacao } from '../../db';
import { iso } from '../../schemas';
import type { AplicativosRepository } from '../aplicativos/aplicativos.repository';
import type { TiposRepository } from '../tipos-de-evento/tipos-de-evento.repository';
import type { VersoesRepository } from '../versoes-de-esquema/versoes-de-esquema.repository';
import type { AssinaturaComNomes, AssinaturasRepository, FiltroDeAssinaturas } from './assinaturas.repository';
import type { AssinaturaDto, Formato } from './assinaturas.schemas';
import { type Autor, colunasDaAutoria, exigirOrcamentoDeAssinaturas, type RegrasDoAssinante } from './autoria';
import { compilarFiltro, FiltroInvalido, recusaDoFiltro } from './filtro';

export const assinaturaDto = (a: AssinaturaComNomes): AssinaturaDto => ({
  id: a.id,
  aplicativo_assinante_id: a.aplicativoAssinanteId,
  aplicativo_assinante_nome: a.aplicativoAssinante.nome,
  tipo_de_evento_id: a.tipoDeEventoId,
  tipo_de_evento_nome: a.versao.tipoDeEvento.nome,
  versao_do_esquema: a.versaoDoEsquema,
  url_de_destino: a.urlDeDestino,
  maximo_de_tentativas: a.maximoDeTentativas,
  entrega_ordenada: a.entregaOrdenada,
  formato: a.formato as Formato,
  ativa: a.ativa,
  filtro: a.filtro as Record<string, unknown> | null,
  criado_em: iso(a.criadoEm),
  atualizado_em: iso(a.atualizadoEm),
  alterada_por_tipo: a.alteradaPorTipo as Autor['tipo'] | null,
  alterada_por: a.alteradaPor,
  alterada_em: a.alteradaEm ? iso(a.alteradaEm) : null,
});

/** Whose subscriptions a write may touch: one application's only (its own routes), or any (the panel). */
export interface Escopo {
  aplicativo_assinante_id?: string;
}

export interface AssinaturasDeps {
  db: DbClient;
  assinaturas: AssinaturasRepository;
  aplicativos: AplicativosRepository;
  tipos: TiposRepository;
  versoes: VersoesRepository;
  /**
   * Refuses (throws a 422) a destination deliveries may not go to; `urlAtual`, the stored URL at a
   * PATCH, is not refused for being http (a subscription accepted before https was required).
   */
  verificarDestino: (url: string, urlAtual?: string) => Promise<void>;
  /** Adds the row of the URL's destination origin when missing, in the transaction that stores the URL. */
  garantirDestino: (url: string, tx: DbClient) => Promise<void>;
  /** Deliveries left fila_de_erro (their messages are now to be removed from the error queue). */
  aoSairDaFilaDeErro: () => void;
}

const duplicada = () =>
  conflict('assinatura_duplicada', 'this application already subscribes to this type and version at this URL');

/** Conflicts of a write, told by Prisma's error codes: the same subscription, or a reference gone. */
function traduzirConflito(error: unknown): never {
  if (isUniqueViolation(error)) throw duplicada();
  if (isForeignKeyViolation(error))
    throw invalidField('', 'referencia_inexistente', 'the application, type or version no longer exists');
  throw error;
}

/** The filter's predicate (null: every event), or its refusal: 422 filtro_invalido at its caminho. */
function compilar(filtro: unknown) {
  try {
    return compilarFiltro(filtro);
  } catch (error) {
    if (error instanceof FiltroInvalido) throw recusaDoFiltro(error);
    throw error;
  }
}

/** A filter as the column takes it: SQL NULL for none. */
const colunaDoFiltro = (filtro: unknown) =>
  filtro === null || filtro === undefined ? Prisma.DbNull : (filtro as Prisma.InputJsonValue);

/**
 * Subscriptions: an application receives the events of one type and schema version at a URL. The
 * destination is checked (DNS, up to 5 s) before a transaction opens, never while one is held.
 */
export function assinaturasService(deps: AssinaturasDeps) {
  const { db, assinaturas } = deps;

  /** Another application's subscription is not found, as one that does not exist. */
  async function existente(id: string, cliente: DbClient = db, escopo: Escopo = {}): Promise<AssinaturaComNomes> {
    const assinatura = await assinaturas.buscar(id, cliente);
    const alheia =
      escopo.aplicativo_assinante_id !== undefined &&
      assinatura?.aplicativoAssinanteId !== escopo.aplicativo_assinante_id;
    if (!assinatura || alheia) throw notFound('subscription');
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

    async criar(
      input: {
        aplicativo_assinante_id: string;
        tipo_de_evento_id: string;
        versao_do_esquema: number;
        url_de_destino: string;
        maximo_de_tentativas: number;
        filtro?: unknown;
        entrega_ordenada?: boolean;
        formato?: Formato;
      },
      autor: Autor,
      regras?: RegrasDoAssinante,
    ) {
      compilar(input.filtro);
      await deps.verificarDestino(input.url_de_destino);
      const agora = new Date();
      const criada = await transacao(db, async (tx) => {
        if (!(await deps.aplicativos.buscar(input.aplicativo_assinante_id, tx))) {
          throw invalidField('/aplicativo_assinante_id', 'aplicativo_inexistente', 'no application has this id');
        }
        if (regras) await exigirOrcamentoDeAssinaturas(tx, input.aplicativo_assinante_id, regras.maximoDeAssinaturas);
        const tipo = await deps.tipos.buscar(input.tipo_de_evento_id, tx);
        if (!tipo) {
          throw invalidField('/tipo_de_evento_id', 'tipo_de_evento_inexistente', 'no event type has this id');
        }
        // An application subscribes only to what the portal offers it: the active types.
        if (regras && !tipo.ativo) {
          throw invalidField(
            '/tipo_de_evento_id',
            'tipo_de_evento_inativo',
            `the event type ${tipo.nome} is switched off`,
          );
        }
        if (!(await deps.versoes.buscarPorNumero(input.tipo_de_evento_id, input.versao_do_esquema, tx))) {
          throw invalidField(
            '/versao_do_esquema',
            'versao_inexistente',
            `the event type has no schema version ${input.versao_do_esquema}`,
          );
        }
        await deps.garantirDestino(input.url_de_destino, tx);
        return assinaturas.criar(
          {
            id: uuidv7(),
            aplicativoAssinanteId: input.aplicativo_assinante_id,
            tipoDeEventoId: input.tipo_de_evento_id,
            versaoDoEsquema: input.versao_do_esquema,
            urlDeDestino: input.url_de_destino,
            maximoDeTentativas: input.maximo_de_tentativas,
            filtro: colunaDoFiltro(input.filtro),
            entregaOrdenada: input.entrega_ordenada ?? false,
            formato: input.formato ?? 'standard-webhooks',
            ativa: true,
            criadoEm: agora,
            atualizadoEm: agora,
            ...colunasDaAutoria(autor, agora),
          },
          tx,
        );
      }).catch(traduzirConflito);
      return assinaturaDto(criada);
    },

    async atualizar(
      id: string,
      input: {
        url_de_destino?: string | null;
        ativa?: boolean | null;
        maximo_de_tentativas?: number | null;
        filtro?: unknown;
        entrega_ordenada?: boolean | null;
        formato?: Formato | null;
      },
      autor: Autor,
      escopo: Escopo = {},
    ) {
      compilar(input.filtro);
      if (input.url_de_destino != null)
        await deps.verificarDestino(input.url_de_destino, (await existente(id, db, escopo)).urlDeDestino);
      const atualizada = await transacao(db, async (tx) => {
        const atual = await existente(id, tx, escopo);
        const changes = {
          ...(input.url_de_destino == null ? {} : { urlDeDestino: input.url_de_destino }),
          ...(input.ativa == null ? {} : { ativa: input.ativa }),
          ...(input.maximo_de_tentativas == null ? {} : { maximoDeTentativas: input.maximo_de_tentativas }),
          ...(input.filtro === undefined ? {} : { filtro: colunaDoFiltro(input.filtro) }),
          // Deliveries already written keep what they were given; only the next publications change.
          ...(input.entrega_ordenada == null ? {} : { entregaOrdenada: input.entrega_ordenada }),
          // Read by the worker at each attempt: the next attempt of any delivery takes the new shape.
          ...(input.formato == null ? {} : { formato: input.formato }),
        };
        if (Object.keys(changes).length === 0) return atual;
        if (changes.urlDeDestino) await deps.garantirDestino(changes.urlDeDestino, tx);
        const agora = new Date();
        return assinaturas.atualizar(id, { ...changes, atualizadoEm: agora, ...colunasDaAutoria(autor, agora) }, tx);
      }).catch(traduzirConflito);
      return assinaturaDto(atualizada);
    },

    /**
     * Whether a filter matches the body { entidade_id, dados } (the other fields of a delivery body
     * are missing here): POST /assinatura/testar-filtro, no side effect. A null filter matches.
     */
    testarFiltro(input: { filtro?: unknown; dados: unknown; entidade_id?: string | undefined }) {
      const predicado = compilar(input.filtro);
      const corpo = {
        ...(input.entidade_id === undefined ? {} : { entidade_id: input.entidade_id }),
        dados: input.dados,
      };
      return { corresponde: predicado === null || predicado(corpo) };
    },

    /** Deletes a subscription and cancels its deliveries not yet attempted or in the error queue. */
    async excluir(id: string, autor: Autor, escopo: Escopo = {}): Promise<void> {
      // One statement cancels every delivery still waiting: a dead subscriber's backlog of 100,000 takes
      // longer than Prisma's 5 s default for an interactive transaction on a busy server (issue 24's
      // benchmark met it at 20,000), and an expired one answers 500 with the subscription still there.
      const { naFilaDeErro } = await transacao(
        db,
        async (tx) => {
          await existente(id, tx, escopo);
          const agora = new Date();
          await assinaturas.excluir(id, agora, colunasDaAutoria(autor, agora), tx);
          return assinaturas.cancelarEntregas(id, agora, tx);
        },
        { timeout: 120_000 },
      );
      if (naFilaDeErro > 0) deps.aoSairDaFilaDeErro();
    },
  };
}
export type AssinaturasService = ReturnType<typeof assinaturasService>;

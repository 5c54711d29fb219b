import { type ApiClient, type components, createApiClient, HubError, HubNetworkError, type paths } from '@hub/client';

/** The gateway's API, same origin, with the signed-in person's token: @hub/client's typed client. */

type ProblemaDaApi = components['schemas']['Problema'];
export type ErroDeCampo = NonNullable<ProblemaDaApi['erros']>[number];
/** What the screens read of a refusal (a network failure has status 0). */
export type Problema = Pick<ProblemaDaApi, 'status' | 'codigo' | 'detail' | 'erros'>;

export interface Pagina<T> {
  itens: T[];
  pagina: number;
  tamanho: number;
  total: number;
}

type Ok<R> = R extends { 200: infer A } ? A : R extends { 201: infer A } ? A : never;
/** The JSON a route answers on success, as the platform's /openapi.json describes it. */
export type Resposta<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? Ok<R> extends { content: { 'application/json': infer C } }
    ? C
    : never
  : never;
/** One item of a paged (or filtered) list route. */
export type ItemDe<P extends keyof paths> =
  Resposta<P, 'get' & keyof paths[P]> extends infer L
    ? L extends { itens: (infer I)[] }
      ? I
      : L extends (infer I)[]
        ? I
        : never
    : never;

const CHAVE = 'hub.painel.token';

/** The token lives in sessionStorage: this tab only, gone when it closes. */
export const sessao = {
  token: () => sessionStorage.getItem(CHAVE),
  guardar: (token: string) => sessionStorage.setItem(CHAVE, token),
  sair: () => sessionStorage.removeItem(CHAVE),
};

const AREAS: [string, string][] = [
  ['/auth', 'colaboradores'],
  ['/colaborador', 'colaboradores'],
  ['/perfil-de-acesso', 'configuracoes'],
];
const ACOES: Record<string, string> = { GET: 'ler', POST: 'criar', PATCH: 'editar', DELETE: 'deletar', PUT: 'editar' };

/** The permission a route needs (architecture §2), to say what is missing when it answers 403. */
export function permissaoDe(metodo: string, caminho: string): string {
  if (caminho.startsWith('/funcao')) return 'ser master';
  const area = AREAS.find(([prefixo]) => caminho.startsWith(prefixo))?.[1] ?? 'monitoramento';
  // A POST that writes nothing: testing a filter is reading.
  if (caminho.endsWith('/assinatura/testar-filtro')) return `${area}.ler`;
  const acao =
    /\/(pausar|retomar|conciliar|fechar-circuito)$/.test(caminho) ||
    (metodo === 'POST' && caminho.endsWith('/reenviar'))
      ? 'editar'
      : (ACOES[metodo] ?? 'ler');
  return `${area}.${acao}`;
}

export class ErroDaApi extends Error {
  constructor(
    readonly problema: Problema,
    readonly metodo: string,
    readonly caminho: string,
  ) {
    super(problema.detail);
  }
  get status() {
    return this.problema.status;
  }
  /** What a person reads: for a 403, the permission that is missing. */
  get texto(): string {
    const { status, detail, codigo } = this.problema;
    // An application's refusal (the subscribers' portal): switched off or unknown to the hub, not a permission.
    if (status === 403 && codigo.startsWith('aplicativo_')) return `${detail} (403 ${codigo})`;
    if (status === 403) return `Sem permissão (403): falta ${permissaoDe(this.metodo, this.caminho)}. ${detail}`;
    if (status === 0) return `Sem resposta do gateway: ${detail}`;
    return `${detail} (${status} ${codigo})`;
  }
}

let aoExpirar = () => {};
/** Called on any 401: the session is over, back to sign-in. */
export const quandoExpirar = (fn: () => void) => {
  aoExpirar = fn;
};

/** Every route, typed with the platform's `paths`; never retried (the person decides). */
export const cliente: ApiClient = createApiClient({
  baseUrl: location.origin,
  token: sessao.token,
  onUnauthorized: () => {
    sessao.sair();
    aoExpirar();
  },
});

/** @hub/client's refusals as the screens show them. */
export function comoErroDaApi(error: unknown): unknown {
  if (error instanceof HubError) {
    const { method = '', path = '' } = error.request ?? {};
    const { detail, erros } = error.problem;
    return new ErroDaApi(
      { status: error.status, codigo: error.codigo, detail: detail || error.message, erros },
      method,
      path,
    );
  }
  if (error instanceof HubNetworkError)
    return new ErroDaApi({ status: 0, codigo: 'sem_resposta', detail: String(error.cause) }, '', '');
  return error;
}

/** The data of a typed call (`dados(cliente.GET('/fila'))`); a refusal rejects with ErroDaApi. */
export async function dados<T>(chamada: Promise<{ data?: T }>): Promise<T> {
  try {
    return (await chamada).data as T;
  } catch (error) {
    throw comoErroDaApi(error);
  }
}

/** What a route takes as its JSON body, as the platform's /openapi.json describes it. */
export type Corpo<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer C } };
}
  ? C
  : never;

type JsonDoGet<P extends keyof paths> = Resposta<P, 'get' & keyof paths[P]>;
/** The routes that answer GET with a page (`?pagina&tamanho`): the lists and the autocompletes. */
export type CaminhoDePagina = {
  [P in keyof paths]: JsonDoGet<P> extends Pagina<unknown> ? P : never;
}[keyof paths];
/** The /filtro routes: the items that match, not paged (capped by the API). */
export type CaminhoDeFiltro = {
  [P in keyof paths]: JsonDoGet<P> extends unknown[] ? P : never;
}[keyof paths];

type Consulta = Record<string, string | number>;
type ClienteSolto = { GET(caminho: string, init: { params: { query: Consulta } }): Promise<{ data?: unknown }> };

/**
 * GET of a list route chosen at run time (a generic list or select), with filters only known then:
 * the one call whose path the compiler cannot follow, so its answer is typed by the path itself.
 */
function listar(caminho: keyof paths, query: Consulta): Promise<unknown> {
  return dados((cliente as unknown as ClienteSolto).GET(caminho, { params: { query } }));
}
export const lerPagina = <P extends CaminhoDePagina>(caminho: P, query: Consulta) =>
  listar(caminho, query) as Promise<Pagina<ItemDe<P>>>;
export const lerFiltro = <P extends CaminhoDeFiltro>(caminho: P, query: Consulta) =>
  listar(caminho, query) as Promise<ItemDe<P>[]>;

/** GET /auth/acesso: who is signed in and what the profile allows. */
export type AcessoAtual = Resposta<'/auth/acesso', 'get'>;
export type Area = keyof AcessoAtual['permissoes'];
export type Acoes = NonNullable<AcessoAtual['permissoes'][Area]>;

/** What a registry screen may do besides reading. */
export type Permite = Required<Omit<Acoes, 'ler'>>;

export const pode = (acesso: AcessoAtual, area: Area, acao?: keyof Acoes): boolean => {
  if (acesso.master) return true;
  const acoes = acesso.permissoes[area];
  if (!acoes) return false;
  return acao ? acoes[acao] === true : Object.values(acoes).some(Boolean);
};

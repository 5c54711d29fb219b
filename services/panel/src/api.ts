/** The gateway's API, same origin, with the signed-in person's token. */

export interface ErroDeCampo {
  caminho: string;
  mensagem: string;
}

export interface Problema {
  status: number;
  codigo: string;
  title?: string;
  detail: string;
  erros?: ErroDeCampo[];
}

export interface Pagina<T> {
  itens: T[];
  pagina: number;
  tamanho: number;
  total: number;
}

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

/** The permission a route needs (DESIGN §2), to say what is missing when it answers 403. */
export function permissaoDe(metodo: string, caminho: string): string {
  if (caminho.startsWith('/funcao')) return 'ser master';
  const area = AREAS.find(([prefixo]) => caminho.startsWith(prefixo))?.[1] ?? 'monitoramento';
  const acao =
    /\/(pausar|retomar|conciliar)$/.test(caminho) || (metodo === 'POST' && caminho.endsWith('/reenviar'))
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

export async function api<T>(metodo: string, caminho: string, corpo?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
  const token = sessao.token();
  if (token) headers.authorization = `Bearer ${token}`;
  if (corpo !== undefined) headers['content-type'] = 'application/json';
  let resposta: Response;
  try {
    resposta = await fetch(caminho, {
      method: metodo,
      headers,
      body: corpo === undefined ? undefined : JSON.stringify(corpo),
    });
  } catch (error) {
    throw new ErroDaApi({ status: 0, codigo: 'sem_resposta', detail: String(error) }, metodo, caminho);
  }
  if (resposta.status === 401) {
    sessao.sair();
    aoExpirar();
  }
  const tipo = resposta.headers.get('content-type') ?? '';
  const json = tipo.includes('json') ? await resposta.json().catch(() => undefined) : undefined;
  if (!resposta.ok) {
    const problema: Problema =
      json && typeof json === 'object' && 'codigo' in json
        ? (json as Problema)
        : { status: resposta.status, codigo: 'erro', detail: resposta.statusText || 'falhou' };
    throw new ErroDaApi({ ...problema, status: resposta.status }, metodo, caminho);
  }
  return (json ?? (resposta.status === 204 ? undefined : await resposta.text())) as T;
}

/** `?a=1&b=x` from the values that are set. */
export function consulta(valores: Record<string, string | number | boolean | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [nome, valor] of Object.entries(valores)) {
    if (valor !== undefined && valor !== null && valor !== '') params.set(nome, String(valor));
  }
  const texto = params.toString();
  return texto ? `?${texto}` : '';
}

export interface Acoes {
  ler?: boolean;
  criar?: boolean;
  editar?: boolean;
  deletar?: boolean;
}
export type Area = 'aplicativos' | 'colaboradores' | 'configuracoes' | 'monitoramento';
export interface AcessoAtual {
  id: string;
  email: string;
  nome: string;
  perfil: string;
  master: boolean;
  perfil_acesso?: string | null;
  permissoes: Partial<Record<Area, Acoes>>;
}

export const pode = (acesso: AcessoAtual, area: Area, acao?: keyof Acoes): boolean => {
  if (acesso.master) return true;
  const acoes = acesso.permissoes[area];
  if (!acoes) return false;
  return acao ? acoes[acao] === true : Object.values(acoes).some(Boolean);
};

import type { Platform } from '@hub/platform-tests';

/** The master every test signs in as (the circuit's history names who closed it). */
export const MASTER = 'admin.painel@empresa.com.br';

/** The schema of every version a test makes: a negative `valor` is what the validator refuses. */
export const ESQUEMA_DO_PEDIDO = {
  type: 'object',
  required: ['pedido_id', 'valor'],
  properties: { pedido_id: { type: 'string' }, valor: { type: 'number', minimum: 0 } },
};

export type Api = <T = unknown>(method: string, path: string, body?: unknown) => Promise<T>;

/** The hub's API with a master's token, for what a test needs in place and does not show being made. */
export function apiComoMaster(platform: Platform): Api {
  let token: Promise<string> | undefined;
  return async <T>(method: string, path: string, body?: unknown) => {
    token ??= platform.userToken('master.painel@empresa.com.br', { master: true });
    const response = await fetch(`${platform.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${await token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
}

export interface Cadastro {
  publicador: { id: string; nome: string };
  assinante: { id: string; nome: string };
  tipo: { id: string; nome: string };
}

/**
 * A registry of a test's own, named after it so no two tests meet: a publisher "Loja {nome}", a
 * subscriber "Estoque {nome}", the type `pedido.{nome}` with version 1 of ESQUEMA_DO_PEDIDO, and a
 * subscription of the subscriber to each of `destinos`.
 */
export async function cadastrar(api: Api, nome: string, destinos: string[] = []): Promise<Cadastro> {
  const aplicativo = (prefixo: string) =>
    api<{ id: string; nome: string }>('POST', '/aplicativo', {
      nome: `${prefixo} ${nome}`,
      client_id: `${prefixo.toLowerCase()}-${nome}`,
    });
  const [publicador, assinante] = await Promise.all([aplicativo('Loja'), aplicativo('Estoque')]);
  const tipo = await api<{ id: string; nome: string }>('POST', '/tipo-de-evento', {
    nome: `pedido.${nome}`,
    aplicativo_id: publicador.id,
  });
  await api('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.id, esquema: ESQUEMA_DO_PEDIDO });
  const cadastro = { publicador, assinante, tipo };
  for (const url of destinos) await assinar(api, cadastro, url);
  return cadastro;
}

export const assinar = (api: Api, cadastro: Cadastro, url: string, maximo_de_tentativas?: number) =>
  api<{ id: string }>('POST', '/assinatura', {
    aplicativo_assinante_id: cadastro.assinante.id,
    tipo_de_evento_id: cadastro.tipo.id,
    versao_do_esquema: 1,
    url_de_destino: url,
    ...(maximo_de_tentativas ? { maximo_de_tentativas } : {}),
  });

/** A test event of the registry's type (POST /evento), with its deliveries. */
export const publicar = (api: Api, cadastro: Cadastro, entidade_id: string) =>
  api<{ id: string; entregas: { id: string; url_de_destino: string }[] }>('POST', '/evento', {
    tipo_de_evento_id: cadastro.tipo.id,
    versao_do_esquema: 1,
    entidade_id,
    dados: { pedido_id: entidade_id, valor: 1 },
  });

/** Until `vale` holds for what the API answers (the API is polled, not the browser). */
export async function ateNaApi<T>(api: Api, rota: string, vale: (corpo: T) => boolean, what: string): Promise<T> {
  const fim = Date.now() + 30_000;
  for (;;) {
    const corpo = await api<T>('GET', rota);
    if (vale(corpo)) return corpo;
    if (Date.now() > fim) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

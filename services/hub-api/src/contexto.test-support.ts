import { randomUUID } from 'node:crypto';
import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { startTestIdentity, type TestIdentity } from '@hub/testing';
import request from 'supertest';
import { startHubApiForTests, type TestHubApi } from './hub-api.test-support';

/** What the route tests of hub-api share: identity, access and hub, with tokens of each kind. */
export interface Contexto {
  identity: TestIdentity;
  access: TestAccess;
  hub: TestHubApi;
  api(): ReturnType<typeof request>;
  /** monitoramento: every action */
  todas: string;
  /** monitoramento: ler only */
  leitor: string;
  /** every action of the other areas, none of monitoramento */
  semMonitoramento: string;
}

export async function iniciarContexto(options: Parameters<typeof startHubApiForTests>[2] = {}): Promise<Contexto> {
  const identity = await startTestIdentity();
  const access = await startAccessForTests(identity);
  const hub = await startHubApiForTests(identity, access, options);
  const email = (nome: string) => `${nome}.${randomUUID().slice(0, 8)}@${access.companyDomain}`;
  const todasAsAcoes = { ler: true, criar: true, editar: true, deletar: true };
  const [todas, leitor, semMonitoramento] = await Promise.all([
    access.userWith(email('monitor'), { monitoramento: todasAsAcoes }),
    access.userWith(email('leitor'), { monitoramento: { ler: true } }),
    access.userWith(email('outras'), {
      aplicativos: todasAsAcoes,
      colaboradores: todasAsAcoes,
      configuracoes: todasAsAcoes,
    }),
  ]);
  return { identity, access, hub, api: () => request(hub.url), todas, leitor, semMonitoramento };
}

export async function encerrarContexto(contexto: Contexto | undefined): Promise<void> {
  await contexto?.hub.close();
  await contexto?.access.close();
  await contexto?.identity.close();
}

export const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/** A name unique to the test run, safe for client ids and event type names. */
export const unico = (prefixo: string) => `${prefixo}_${randomUUID().replaceAll('-', '').slice(0, 10)}`;

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Checks the page frame { itens, pagina, tamanho, total } of a list answer. */
export function expectPagina(
  body: unknown,
  pagina: number,
  tamanho: number,
): asserts body is { itens: Record<string, unknown>[]; total: number } {
  const frame = body as Record<string, unknown>;
  if (Object.keys(frame).sort().join() !== 'itens,pagina,tamanho,total')
    throw new Error(`not a page frame: ${JSON.stringify(frame)}`);
  if (
    !Array.isArray(frame.itens) ||
    frame.pagina !== pagina ||
    frame.tamanho !== tamanho ||
    typeof frame.total !== 'number'
  ) {
    throw new Error(
      `unexpected page frame: ${JSON.stringify({ ...frame, itens: `[${(frame.itens as unknown[]).length}]` })}`,
    );
  }
}

type Corpo = Record<string, unknown>;

async function criar(ctx: Contexto, path: string, body: Corpo): Promise<Corpo & { id: string }> {
  const response = await ctx.api().post(path).set(auth(ctx.todas)).send(body);
  if (response.status !== 201)
    throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}

export const criarAplicativo = (ctx: Contexto, nome = 'Aplicativo') =>
  criar(ctx, '/aplicativo', { nome, client_id: unico('app') });

export async function criarTipo(ctx: Contexto, extra: Corpo = {}) {
  const aplicativo = extra.aplicativo_id ? undefined : await criarAplicativo(ctx, 'Dono');
  return criar(ctx, '/tipo-de-evento', { nome: `${unico('pedido')}.criado`, aplicativo_id: aplicativo?.id, ...extra });
}

export const ESQUEMA_PEDIDO = {
  type: 'object',
  required: ['numero', 'valor'],
  properties: { numero: { type: 'string', minLength: 1 }, valor: { type: 'number', minimum: 0 } },
  additionalProperties: false,
};

export const criarVersao = (ctx: Contexto, tipoId: string, esquema: Corpo = ESQUEMA_PEDIDO) =>
  criar(ctx, '/versao-de-esquema', { tipo_de_evento_id: tipoId, esquema });

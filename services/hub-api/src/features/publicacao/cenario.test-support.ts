import { auth, type Contexto, criarAplicativo, criarTipo, criarVersao } from '../../contexto.test-support';

/** What the publication tests share: an owner application with its token, a type and its version 1. */
export interface Cenario {
  dono: { id: string; client_id: string };
  tokenDoDono: string;
  tipo: { id: string; nome: string };
  corpo(extra?: Record<string, unknown>): Record<string, unknown>;
}

export async function cenario(ctx: Contexto, esquema?: Record<string, unknown>): Promise<Cenario> {
  const dono = (await criarAplicativo(ctx, 'Dono')) as unknown as Cenario['dono'];
  const tipo = (await criarTipo(ctx, { aplicativo_id: dono.id })) as unknown as Cenario['tipo'];
  await criarVersao(ctx, tipo.id, esquema);
  return {
    dono,
    tokenDoDono: await ctx.identity.appToken(dono.client_id),
    tipo,
    corpo: (extra = {}) => ({
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      entidade_id: 'pedido-1',
      dados: { numero: 'A-1', valor: 10 },
      ...extra,
    }),
  };
}

/** POST /eventos with the application's token. */
export const publicar = (ctx: Contexto, token: string, corpo: unknown, headers: Record<string, string> = {}) =>
  ctx
    .api()
    .post('/eventos')
    .set({ ...auth(token), ...headers })
    .send(corpo as object);

/** A subscription of a new application to the type and version. */
export async function assinar(ctx: Contexto, tipoId: string, versao = 1, extra: Record<string, unknown> = {}) {
  const assinante = await criarAplicativo(ctx, 'Assinante');
  const response = await ctx
    .api()
    .post('/assinatura')
    .set(auth(ctx.todas))
    .send({
      aplicativo_assinante_id: assinante.id,
      tipo_de_evento_id: tipoId,
      versao_do_esquema: versao,
      url_de_destino: `https://recebedor.example/${assinante.id}`,
      ...extra,
    });
  if (response.status !== 201) throw new Error(`POST /assinatura answered ${response.status}: ${response.text}`);
  return response.body as { id: string; aplicativo_assinante_id: string; url_de_destino: string };
}

/** The e-mail claim of a user token (what the panel publisher records). */
export const emailDoToken = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { email: string }).email;

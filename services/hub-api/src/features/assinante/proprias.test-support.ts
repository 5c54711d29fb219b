import { lookup as dnsLookup } from 'node:dns/promises';
import {
  auth,
  type Contexto,
  criarAplicativo,
  criarTipo,
  criarVersao,
  iniciarContexto,
} from '../../contexto.test-support';

/** Host names of the tests' own: one public, one private; any other name as the system resolves it. */
const NOMES: Record<string, string> = { 'recebedor.exemplo': '93.184.216.34', 'interno.exemplo': '10.11.12.13' };
const lookup = async (host: string) =>
  NOMES[host] ? [{ address: NOMES[host], family: 4 }] : dnsLookup(host, { all: true, verbatim: true });

export const URL_PUBLICA = 'https://recebedor.exemplo/webhook';

/** A SANDBOX hub (destination safety as in production) with small budgets per application. */
export const iniciarContextoDoAssinante = (env: Record<string, string> = {}) =>
  iniciarContexto({
    ambiente: 'SANDBOX',
    start: { lookup },
    env: { HUB_ASSINATURAS_POR_APLICATIVO: '3', HUB_ALTERACOES_DE_ASSINATURAS_POR_MINUTO: '8', ...env },
  });

/** A subscribing application with its token, and a type (of another application) with version 1. */
export async function assinanteComTipo(ctx: Contexto) {
  const aplicativo = await criarAplicativo(ctx, 'Assinante');
  const tipo = await criarTipo(ctx);
  await criarVersao(ctx, tipo.id);
  const token = await ctx.identity.appToken(aplicativo.client_id as string);
  const corpo = { tipo_de_evento_id: tipo.id, versao_do_esquema: 1, url_de_destino: URL_PUBLICA };
  return { aplicativo, tipo, token, corpo, comToken: auth(token) };
}

/** The subscriptions of an application as the database has them, deleted ones included. */
export const linhasDoAssinante = (ctx: Contexto, aplicativoId: string) =>
  ctx.hub.db.assinatura.findMany({ where: { aplicativoAssinanteId: aplicativoId }, orderBy: { criadoEm: 'asc' } });

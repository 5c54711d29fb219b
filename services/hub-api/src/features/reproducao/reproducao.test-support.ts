import { uuidv7 } from '@hub/database';
import { waitFor } from '@hub/testing';
import type { Db } from '../../db';
import { auth, type Contexto } from '../../contexto.test-support';
import type { Cenario } from '../eventos/linhas.test-support';
import type { ReproducaoDto } from './reproducao.schemas';

/** An event stored as publication stores it (real PostgreSQL), at a chosen instant of receipt. */
export async function guardarEvento(
  db: Db,
  c: Cenario,
  e: { recebidoEm: Date; entidadeId?: string; dados?: { [chave: string]: string | number }; versao?: number },
): Promise<string> {
  const id = uuidv7(e.recebidoEm.getTime());
  await db.evento.create({
    data: {
      id,
      tipoDeEventoId: c.tipoId,
      versaoDoEsquema: e.versao ?? c.versao,
      aplicativoPublicadorId: c.aplicativoId,
      entidadeId: e.entidadeId ?? 'pedido-1',
      ocorridoEm: e.recebidoEm,
      recebidoEm: e.recebidoEm,
      dados: e.dados ?? { numero: '1', valor: 10 },
    },
  });
  return id;
}

/** Events received one second apart from `inicio`, their ids in that order. */
export async function guardarEventos(db: Db, c: Cenario, n: number, inicio: Date, entidadeId?: string) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(await guardarEvento(db, c, { recebidoEm: new Date(inicio.getTime() + i * 1000), entidadeId }));
  return ids;
}

/** POST /assinatura/{id}/reproduzir as a panel user with every permission of monitoramento; must be 202. */
export async function reproduzir(ctx: Contexto, assinaturaId: string, corpo: Record<string, unknown>) {
  const response = await ctx.api().post(`/assinatura/${assinaturaId}/reproduzir`).set(auth(ctx.todas)).send(corpo);
  if (response.status !== 202) throw new Error(`reproduzir answered ${response.status}: ${response.text}`);
  return response.body as ReproducaoDto;
}

/** Waits until the replay is final (concluida or cancelada) and answers it as GET /reproducao/{id} does. */
export const aoFim = (ctx: Contexto, id: string) =>
  waitFor(
    async () => {
      const response = await ctx.api().get(`/reproducao/${id}`).set(auth(ctx.leitor));
      const r = response.body as ReproducaoDto;
      return r.situacao === 'concluida' || r.situacao === 'cancelada' ? r : undefined;
    },
    { what: 'the replay to end' },
  );

/** The subscription's deliveries, by the receipt of their event. */
export const entregasDe = (db: Db, assinaturaId: string) =>
  db.entrega.findMany({ where: { assinaturaId }, orderBy: [{ eventoRecebidoEm: 'asc' }, { eventoId: 'asc' }] });

/** A second subscription of the scenario's subscriber to its type (another destination). */
export async function outraAssinatura(ctx: Contexto, c: Cenario, extra: Record<string, unknown> = {}) {
  const response = await ctx
    .api()
    .post('/assinatura')
    .set(auth(ctx.todas))
    .send({
      aplicativo_assinante_id: c.assinanteId,
      tipo_de_evento_id: c.tipoId,
      versao_do_esquema: 1,
      url_de_destino: `https://recebedor.example/${uuidv7()}`,
      ...extra,
    });
  if (response.status !== 201) throw new Error(`POST /assinatura answered ${response.status}: ${response.text}`);
  return response.body.id as string;
}

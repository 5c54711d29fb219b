import { uuidv7 } from '@hub/database';
import type { PageRequest } from '@hub/http';
import { Prisma, type Tx } from '@hub/hub-data';
import type { Db } from '../../db';
import { auth, type Contexto, criarAplicativo, criarTipo, criarVersao } from '../../contexto.test-support';
import { comNomes } from './eventos.repository';
import type { Situacao } from './eventos.schemas';

/**
 * Rows of publication and delivery written straight into the test database (real PostgreSQL), so
 * the panel's reads are tested without the publication path, which is built separately.
 */

export interface Cenario {
  aplicativoId: string;
  tipoId: string;
  versao: number;
  assinaturaId: string;
  assinanteId: string;
}

export async function gravarEvento(
  db: Db,
  cenario: Cenario,
  evento: {
    recebidoEm: Date;
    entidadeId?: string;
    publicadoPeloEmail?: string | null;
    entregas?: Situacao[];
    tipoId?: string;
    aplicativoId?: string;
  },
): Promise<{ id: string; entregas: string[] }> {
  const id = uuidv7();
  await db.evento.create({
    data: {
      id,
      tipoDeEventoId: evento.tipoId ?? cenario.tipoId,
      versaoDoEsquema: cenario.versao,
      aplicativoPublicadorId: evento.aplicativoId ?? cenario.aplicativoId,
      entidadeId: evento.entidadeId ?? 'pedido-1',
      ocorridoEm: evento.recebidoEm,
      recebidoEm: evento.recebidoEm,
      publicadoPeloEmail: evento.publicadoPeloEmail ?? null,
      dados: { numero: '1', valor: 10 },
    },
  });
  const entregas = (evento.entregas ?? []).map((situacao) => ({
    id: uuidv7(),
    eventoId: id,
    eventoRecebidoEm: evento.recebidoEm,
    entidadeId: evento.entidadeId ?? 'pedido-1',
    assinaturaId: cenario.assinaturaId,
    aplicativoAssinanteId: cenario.assinanteId,
    tipoDeEventoId: evento.tipoId ?? cenario.tipoId,
    versaoDoEsquema: cenario.versao,
    urlDeDestino: 'https://recebedor.example/webhook',
    situacao,
    maximoDeTentativas: 8,
    proximaTentativaEm: evento.recebidoEm,
    criadaEm: evento.recebidoEm,
    atualizadaEm: evento.recebidoEm,
  }));
  if (entregas.length) await db.entrega.createMany({ data: entregas });
  return { id, entregas: entregas.map((e) => e.id) };
}

export async function gravarTentativa(db: Db, entregaId: string, numero: number, statusHttp: number | null) {
  // the delivery's subscription, copied as the worker's record does (migration 026)
  const { assinaturaId } = await db.entrega.findUniqueOrThrow({
    where: { id: entregaId },
    select: { assinaturaId: true },
  });
  await db.tentativa.create({
    data: {
      id: uuidv7(),
      entregaId,
      assinaturaId,
      numero,
      iniciadaEm: new Date(),
      duracaoMs: 12,
      statusHttp,
      sucesso: statusHttp !== null && statusHttp >= 200 && statusHttp < 300,
    },
  });
}

export async function gravarRecusado(
  db: Db,
  recusado: { codigo: string; recebidoEm: Date; aplicativoId?: string | null; tipoDeEventoId?: string | null },
): Promise<string> {
  const id = uuidv7();
  await db.eventoRecusado.create({
    data: {
      id,
      codigo: recusado.codigo,
      statusHttp: 422,
      detalhe: 'dados break the schema of the version',
      erros: [{ caminho: '/dados/valor', mensagem: 'must be >= 0' }],
      corpo: '{"dados":{"valor":-1}}',
      tipoDeEventoId: recusado.tipoDeEventoId ?? null,
      versaoDoEsquema: recusado.tipoDeEventoId ? 1 : null,
      aplicativoId: recusado.aplicativoId ?? null,
      clientId: recusado.aplicativoId ? 'app_cliente' : null,
      recebidoEm: recusado.recebidoEm,
    },
  });
  return id;
}

/** Adds to the summary's tally of the hour `hora` (slice `fatia`), as publication and the worker do. */
export async function somarResumo(
  db: Db,
  hora: Date,
  fatia: number,
  valores: { eventos?: number; recusados?: number; entregasConcluidas?: number; tentativasComFalha?: number },
) {
  await db.resumoPorHora.upsert({
    where: { hora_fatia: { hora, fatia } },
    create: { hora, fatia, ...valores },
    update: {
      eventos: { increment: valores.eventos ?? 0 },
      recusados: { increment: valores.recusados ?? 0 },
      entregasConcluidas: { increment: valores.entregasConcluidas ?? 0 },
      tentativasComFalha: { increment: valores.tentativasComFalha ?? 0 },
    },
  });
}

/** Through the registry's routes: a publisher owning a type with version 1, and a subscription to it. */
export async function criarCenario(
  ctx: Contexto,
  tipo: Record<string, unknown> = {},
): Promise<Cenario & { tipoNome: string }> {
  const publicador = await criarAplicativo(ctx, 'Publicador');
  const assinante = await criarAplicativo(ctx, 'Assinante');
  const criado = await criarTipo(ctx, { aplicativo_id: publicador.id, ...tipo });
  await criarVersao(ctx, criado.id);
  const assinatura = await ctx.api().post('/assinatura').set(auth(ctx.todas)).send({
    aplicativo_assinante_id: assinante.id,
    tipo_de_evento_id: criado.id,
    versao_do_esquema: 1,
    url_de_destino: 'https://recebedor.example/webhook',
  });
  if (assinatura.status !== 201) throw new Error(`POST /assinatura answered ${assinatura.status}`);
  return {
    aplicativoId: publicador.id,
    tipoId: criado.id,
    tipoNome: criado.nome as string,
    versao: 1,
    assinaturaId: assinatura.body.id,
    assinanteId: assinante.id,
  };
}

/** The same page by a plain OFFSET walk from the newest event: what sqlDaPagina must equal (total.test.ts). */
export function sqlDaPaginaPorOffset({ pagina, tamanho }: PageRequest): Prisma.Sql {
  const skip = Math.min((pagina - 1) * tamanho, Number.MAX_SAFE_INTEGER);
  return comNomes(
    Prisma.sql`select id, recebido_em from evento order by recebido_em desc, id desc offset ${skip} limit ${tamanho}`,
  );
}

/**
 * Rows of resumo_por_hora that `mover` inserted or updated, from the backend's counters of the table
 * before and after it in one transaction (they also hold what earlier transactions of the connection
 * wrote and the server has not gathered yet, hence the difference): how many hour rows one
 * operator's statement touched.
 */
export function escritasNoResumo(db: Db, mover: (tx: Tx) => Promise<unknown>): Promise<number> {
  return db.$transaction(async (tx) => {
    const contador = async () =>
      (
        await tx.$queryRaw<{ n: number }[]>`
          select coalesce(sum(n_tup_ins + n_tup_upd), 0)::int as n from pg_stat_xact_user_tables
           where relname = 'resumo_por_hora'`
      )[0]!.n;
    const antesDeMover = await contador();
    await mover(tx);
    return (await contador()) - antesDeMover;
  });
}

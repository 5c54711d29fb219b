import { runOnPrisma } from '@hub/database';
import { origemDaUrl } from '@hub/destinations';
import { notFound } from '@hub/http';
import { percentil } from '@hub/hub-data';
import { z } from 'zod';
import type { DbClient } from '../../db';
import { iso } from '../../schemas';
import { CIRCUITOS } from '../destinos/destinos.schemas';
import { SAUDE_DURACOES, SAUDE_TENTATIVAS } from './saude.sql';

const DIA_MS = 24 * 60 * 60 * 1000;

export const saudeDaAssinaturaSchema = z.object({
  assinatura_id: z.string(),
  desde: z.string().describe('the start of the window: 24 hours before the answer'),
  tentativas_nas_ultimas_24_horas: z.number().int().describe("the subscription's attempts started since desde"),
  falhas_nas_ultimas_24_horas: z.number().int().describe('those that failed (a status outside 2xx, or no answer)'),
  destino: z
    .object({
      origem: z.string(),
      circuito: z.enum(CIRCUITOS).describe('the circuit breaker of the destination: fechado, aberto or meio_aberto'),
      pausado: z.boolean().describe('an operator holds its deliveries'),
      latencia_p50_ms: z
        .number()
        .int()
        .nullable()
        .describe(
          "median duration of the destination's attempts since desde (every subscription at its origin), an upper bound of its bucket; null without attempts",
        ),
      latencia_p99_ms: z.number().int().nullable().describe('99th percentile, as latencia_p50_ms'),
    })
    .nullable()
    .describe(
      'the destination (origin of url_de_destino) as the delivery workers see it; null before its first delivery',
    ),
});
export type SaudeDaAssinatura = z.infer<typeof saudeDaAssinaturaSchema>;

/**
 * A subscription's health for its application (GET /assinaturas/{id}/saude): its attempts and
 * failures of the last 24 hours (an index-only count on tentativa_assinatura, migration 026), and its
 * destination's circuit, pause and latency (destino, destino_minuto: what GET /destino shows operators).
 */
export function saudeDaAssinatura(db: DbClient, relogio: () => Date = () => new Date()) {
  return async (aplicativoId: string, assinaturaId: string): Promise<SaudeDaAssinatura> => {
    const assinatura = await db.assinatura.findFirst({
      where: { id: assinaturaId, aplicativoAssinanteId: aplicativoId, excluidaEm: null },
      select: { urlDeDestino: true },
    });
    if (!assinatura) throw notFound('subscription');
    const desde = new Date(relogio().getTime() - DIA_MS);
    const origem = origemDaUrl(assinatura.urlDeDestino);
    const [[contagem], destino] = await Promise.all([
      runOnPrisma(db, SAUDE_TENTATIVAS, [assinaturaId, desde]),
      db.destino.findUnique({ where: { origem }, select: { id: true, circuito: true, pausado: true } }),
    ]);
    const duracoes = destino ? await duracoesDoDestino(db, destino.id, desde) : [];
    return {
      assinatura_id: assinaturaId,
      desde: iso(desde),
      tentativas_nas_ultimas_24_horas: contagem?.tentativas ?? 0,
      falhas_nas_ultimas_24_horas: contagem?.falhas ?? 0,
      destino: destino
        ? {
            origem,
            circuito: destino.circuito as (typeof CIRCUITOS)[number],
            pausado: destino.pausado,
            latencia_p50_ms: percentil(duracoes, 0.5),
            latencia_p99_ms: percentil(duracoes, 0.99),
          }
        : null,
    };
  };
}

/** The destination's duration buckets summed over its minutes since `desde` (destino_minuto.duracoes). */
async function duracoesDoDestino(db: DbClient, destinoId: string, desde: Date): Promise<number[]> {
  const [linha] = await runOnPrisma(db, SAUDE_DURACOES, [destinoId, desde]);
  return linha?.duracoes ?? [];
}

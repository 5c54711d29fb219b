import { destinationRoutingKey, EXCHANGES, trabalhoDeEntrega } from '@hub/contracts';
import { type NotificationListener, runOnPrisma } from '@hub/database';
import { origemDaUrl } from '@hub/destinations';
import { periodicJob } from '@hub/jobs';
import type { Logger } from '@hub/log';
import type { LinhaDaOutbox, OutboxMessage } from '@hub/outbox';
import type { DbClient } from '../../db';
import { DESTINOS_ISOLADOS } from './destinos.sql';

/** The channel on which a change of a destination's isolation is announced at commit (migration 015). */
export const CANAL_DO_ISOLAMENTO = 'destino_isolamento';

export interface DestinosIsoladosDeps {
  db: DbClient;
  logger: Logger;
  /** The process's LISTEN connection: a change is heard at its commit. */
  avisos: NotificationListener;
  /** Read again this often anyway (a notification missed): HUB_CACHE_TTL. */
  intervaloMs: number;
}

/**
 * The destinations whose jobs go to a queue of their own now (destino.isolamento = 'isolada',
 * architecture §5, "Fair scheduling"), kept in memory for the outbox relay: a new job of one of
 * them is published straight to its queue, so a backlog published after the isolation never passes
 * through the shared work queue. Read at start, again when a change is announced, and every
 * `intervaloMs`. A stale set is safe either way: a job routed to the shared queue is forwarded by
 * the workers, and one routed to a queue that is gone is returned and published to the shared queue.
 */
export function destinosIsolados(deps: DestinosIsoladosDeps) {
  let rotas = new Map<string, string>();
  let pararDeOuvir: (() => void) | undefined;

  async function ler(): Promise<void> {
    const linhas = await runOnPrisma(deps.db, DESTINOS_ISOLADOS);
    rotas = new Map(linhas.map((l) => [l.origem, destinationRoutingKey(l.id)]));
  }

  const leituras = periodicJob({
    name: 'isolated destinations',
    logger: deps.logger,
    everyMs: deps.intervaloMs,
    run: async () => {
      try {
        await ler();
      } catch (error) {
        deps.logger.warn({ err: error }, 'isolated destinations not read; the last set stays');
      }
    },
  });

  /** Reads the set (one read at a time; a request during one reads once more after it). */
  const recarregar = (): Promise<void> => leituras.runNow();

  /** A delivery job's route to its destination's own queue, when that destination has one. */
  function rotaDoTrabalho(exchange: string, routingKey: string, corpo: unknown) {
    if (routingKey !== trabalhoDeEntrega.routingKey || exchange !== EXCHANGES.entregas) return undefined;
    const url = (corpo as { url_de_destino?: unknown } | null)?.url_de_destino;
    if (typeof url !== 'string' || !URL.canParse(url)) return undefined;
    const rota = rotas.get(origemDaUrl(url));
    return rota ? { exchange, routingKey: rota } : undefined;
  }

  return {
    async iniciar(): Promise<void> {
      pararDeOuvir = deps.avisos.on(CANAL_DO_ISOLAMENTO, () => void recarregar());
      await recarregar();
      leituras.start();
    },
    async parar(): Promise<void> {
      pararDeOuvir?.();
      await leituras.stop();
    },
    recarregar,
    /** How many destinations are isolated now (tests, metrics). */
    quantos: () => rotas.size,
    /**
     * The outbox relay's other route: a delivery job of an isolated destination goes to its queue's
     * routing key on the same exchange; anything else, nothing (its own route).
     */
    rotear(linha: LinhaDaOutbox): { exchange: string; routingKey: string } | undefined {
      if (rotas.size === 0) return undefined;
      let corpo: unknown;
      try {
        corpo = JSON.parse(linha.body);
      } catch {
        return undefined;
      }
      return rotaDoTrabalho(linha.exchange, linha.routing_key, corpo);
    },
    /** The same route for a job publication sends right after its commit (not yet a row). */
    rotearMensagem(mensagem: OutboxMessage): { exchange: string; routingKey: string } | undefined {
      if (rotas.size === 0) return undefined;
      return rotaDoTrabalho(mensagem.exchange, mensagem.routingKey, mensagem.body);
    },
  };
}
export type DestinosIsolados = ReturnType<typeof destinosIsolados>;

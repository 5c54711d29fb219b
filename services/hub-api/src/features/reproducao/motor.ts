import { executeOnPrisma, uuidv7 } from '@hub/database';
import { OUTBOX_INSERIR, outboxColumns } from '@hub/outbox';
import type { Reproducao } from '@hub/hub-data';
import { type Db, type Tx, transacao } from '../../db';
import { iniciarNovoCiclo } from '../entregas/ciclo';
import { mensagemDoTrabalho, trabalhosDasEntregas } from '../entregas/trabalho';
import { classificar } from './classificacao';
import type { AssinaturaParaLote, LoteRepository } from './lote.repository';

export interface MotorDeps {
  db: Db;
  repo: LoteRepository;
  /** Events per batch, each batch one transaction (HUB_REPRODUCAO_LOTE, narrowed by HUB_REPRODUCAO_POR_SEGUNDO: ritmo.ts). */
  lote: number;
  /** The next batch waits while more than this many of the last batch's deliveries are still in the queue (HUB_REPRODUCAO_EM_FILA). */
  emFila: number;
  relogio?: () => Date;
}

/** What one step of a replay did. */
export type Passo =
  | { feito: 'nada' }
  | { feito: 'aguardando' }
  | { feito: 'lote'; saiuDaFilaDeErro: boolean }
  | { feito: 'encerrada'; situacao: 'concluida' | 'cancelada' };

/**
 * One batch of a replay, as ONE transaction (docs/decisions/replay-engine.md): the replay's row and
 * its subscription locked, the next events after the cursor read, a delivery written for each event
 * without one (its job in the outbox, as a resend's), a new cycle for the deliveries incluir_entregues
 * takes, the counters, the cursor and the deliveries in flight updated. A process killed anywhere in
 * it leaves nothing of the batch; the next runner reads the same cursor and does the same batch.
 */
export function motorDaReproducao(deps: MotorDeps) {
  const { db, repo } = deps;
  const relogio = deps.relogio ?? (() => new Date());

  const encerrar = async (r: Reproducao, situacao: 'concluida' | 'cancelada', agora: Date, tx: Tx): Promise<Passo> => {
    await tx.reproducao.update({
      where: { id: r.id },
      data: { situacao, atualizadaEm: agora, concluidaEm: agora, emVoo: [] },
    });
    return { feito: 'encerrada', situacao };
  };

  /** New deliveries for these events, their jobs (those whose turn it is) in the outbox. */
  async function criar(
    a: AssinaturaParaLote,
    eventos: Parameters<LoteRepository['criarEntregas']>[1],
    agora: Date,
    tx: Tx,
  ) {
    const escritas = await repo.criarEntregas(a, eventos, agora, tx);
    const agoraVao = escritas.filter((e) => !e.em_espera).map((e) => e.id);
    const trabalhos = await trabalhosDasEntregas(tx, agoraVao, null);
    if (trabalhos.size > 0) {
      await executeOnPrisma(tx, OUTBOX_INSERIR, outboxColumns([...trabalhos.values()].map(mensagemDoTrabalho)));
    }
    return escritas.map((e) => e.id);
  }

  async function lote(r: Reproducao, a: AssinaturaParaLote, agora: Date, tx: Tx): Promise<Passo> {
    const eventos = await repo.proximos(r, a, deps.lote, tx);
    if (eventos.length === 0) return encerrar(r, 'concluida', agora, tx);
    const c = classificar(eventos, { ...a, incluirEntregues: r.incluirEntregues });
    // Resends first: their rows are locked before any chain's counter, as the worker locks them.
    const finais = await repo.travarFinais(c.reenviar, tx);
    await iniciarNovoCiclo(
      tx,
      finais.map((f) => f.id),
      agora,
      null,
    );
    const criadas = await criar(
      a,
      c.criar.map((evento) => ({ id: uuidv7(agora.getTime()), evento })),
      agora,
      tx,
    );
    const ultimo = eventos[eventos.length - 1]!;
    await tx.reproducao.update({
      where: { id: r.id },
      data: {
        situacao: 'em_andamento',
        atualizadaEm: agora,
        criadas: { increment: criadas.length },
        reenviadas: { increment: finais.length },
        ignoradas: { increment: c.ignoradas + c.reenviar.length - finais.length },
        cursorRecebidoEm: ultimo.recebidoEm,
        cursorEventoId: ultimo.id,
        emVoo: [...criadas, ...finais.map((f) => f.id)],
      },
    });
    return { feito: 'lote', saiuDaFilaDeErro: finais.some((f) => f.situacao === 'fila_de_erro') };
  }

  /** One step of the replay `id`: nothing (final, or another runner holds it), a wait, a batch, or its end. */
  return (id: string): Promise<Passo> =>
    transacao(db, async (tx) => {
      const r = await repo.reivindicar(id, tx);
      if (!r) return { feito: 'nada' };
      const agora = relogio();
      const a = await repo.travarAssinatura(r.assinaturaId, tx);
      // A subscription switched off or deleted receives nothing: the replay ends there.
      if (!a?.recebe) return encerrar(r, 'cancelada', agora, tx);
      // Its last batch still in the queue: the next waits, unless there is none (then it concluded).
      if ((await repo.aindaNaFila(r.emVoo, tx)) > deps.emFila)
        return (await repo.proximos(r, a, 1, tx)).length > 0
          ? { feito: 'aguardando' }
          : encerrar(r, 'concluida', agora, tx);
      return lote(r, a, agora, tx);
    });
}
export type MotorDaReproducao = ReturnType<typeof motorDaReproducao>;

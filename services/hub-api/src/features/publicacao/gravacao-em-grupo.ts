import { GroupCommit } from '@hub/database';
import { bancoIndisponivel } from '@hub/http';
import type { OutboxMessage } from '@hub/outbox';
import { iniciarTrecho, rastreamentoLigado } from '@hub/tracing';
import type { TrabalhoDeEntrega } from '@hub/contracts';
import type { Gravacao } from './gravacao';
import type { Escritos, PublicacaoRepository } from './publicacao.repository';

export interface GravadorOptions {
  /** Publications per statement at most. */
  maximo?: number;
  /** Statements in flight at once (connections of the pool the writer may hold). */
  paralelos?: number;
  /** Milliseconds a statement in flight must have been under way before a second starts beside it (ESCALONAR_APOS_MS). */
  escalonarApos?: number;
  /** Told each statement's number of publications (hub_group_commit_items). */
  aoEsvaziar?: (itens: number) => void;
}

/**
 * How long a group write must have been in flight before a second starts beside it (GroupCommit's
 * `escalonarApos`; docs/decisions/group-commit-of-publications.md). Under a
 * steady load a statement takes a few milliseconds and the next carries everything that arrived
 * meanwhile: about 20 publications a statement at saturation instead of about 10 with two taking
 * turns, and 20-30 % less CPU per publication in hub-api, RabbitMQ and PostgreSQL together. A
 * statement that stalls (a checkpoint, a lock: the ~50 ms stalls of the isolation runs) holds only
 * its own publications: those behind it go beside it once it is this late.
 */
export const ESCALONAR_APOS_MS = 15;

/**
 * The jobs of a batch with ordered deliveries: each ordered one's body gets the sequencia the
 * statement gave it, and the job of one that waits for an earlier delivery of its entity is not
 * sent (docs/decisions/ordered-delivery-per-entity.md: whoever makes that earlier one final sends it).
 */
function trabalhosDe(gravados: Gravacao[], escritos: Escritos): OutboxMessage[] {
  const trabalhos: OutboxMessage[] = [];
  for (const g of gravados)
    g.entregas.forEach((e, i) => {
      const trabalho = g.trabalhos[i]!;
      const lugar = e.ordenada ? escritos.ordenadas.get(e.id) : undefined;
      if (!lugar) {
        trabalhos.push(trabalho);
        return;
      }
      e.sequencia = lugar.sequencia;
      if (lugar.emEspera) return;
      const corpo = trabalho.body as TrabalhoDeEntrega;
      trabalhos.push({ ...trabalho, body: { ...corpo, corpo: g.corpoPara!(e.assinaturaId, lugar.sequencia) } });
    });
  return trabalhos;
}

/**
 * Publication's group commit (architecture §5; @hub/database's GroupCommit), with or without an
 * Idempotency-Key: publications that arrive while a statement is in flight wait and go together in
 * the next one (repo.gravar: one statement, one commit for all). A publication of a quiet moment
 * goes at once ('imediato'), and a failed batch is tried again one by one in order of arrival
 * ('em-ordem'): one key twice in a batch fails it (an upsert cannot touch a row twice), and alone
 * the second waits for the first and finds the key taken. Once a statement has committed, the jobs
 * of the publications it wrote go to `despachar` (despacho.ts), before any of them is answered.
 */
export function gravadorEmGrupo(
  repo: Pick<PublicacaoRepository, 'gravar'>,
  despachar: (trabalhos: OutboxMessage[]) => void,
  options: GravadorOptions = {},
) {
  const grupo = new GroupCommit<Gravacao, boolean>(
    async (lote) => {
      const escritos = rastreamentoLigado() ? await gravarNoTrecho(repo, lote) : await repo.gravar(lote);
      const gravados = lote.filter((g) => escritos.eventos.has(g.evento.id));
      despachar(escritos.ordenadas.size === 0 ? gravados.flatMap((g) => g.trabalhos) : trabalhosDe(gravados, escritos));
      return lote.map((g) => escritos.eventos.has(g.evento.id));
    },
    {
      maximo: options.maximo ?? 200,
      paralelos: options.paralelos ?? 2,
      escalonarApos: options.escalonarApos ?? ESCALONAR_APOS_MS,
      inicio: 'imediato',
      repeticao: 'em-ordem',
      // A statement that failed for want of a database (lost, or unanswered past its timeout) fails
      // its whole batch at once (503): one by one, a hung database would cost each a timeout in turn.
      naoRepetir: bancoIndisponivel,
      aoEsvaziar: options.aoEsvaziar,
    },
  );
  return {
    /**
     * Resolves once the publication's rows are committed: true when they were written, false when
     * its Idempotency-Key belongs to another publication (nothing of it was written).
     */
    gravar: (gravacao: Gravacao): Promise<boolean> => grupo.add(gravacao),
  };
}
export type GravadorEmGrupo = ReturnType<typeof gravadorEmGrupo>;

/**
 * The batch's statement in a span of its own (when tracing records): a child of the publication
 * that opened the batch, linked to every other publication in it, each of which links back to it.
 * The statement's pg span is its child. One trace per publication, however many share a commit.
 */
async function gravarNoTrecho(repo: Pick<PublicacaoRepository, 'gravar'>, lote: Gravacao[]) {
  const primeira = lote[0]?.trecho;
  const trecho = iniciarTrecho('publicacao.gravacao_em_grupo', {
    pai: primeira?.rastro,
    links: lote.slice(1).map((g) => g.trecho),
    atributos: { 'hub.publicacoes': lote.length },
  });
  for (const g of lote.slice(1)) g.trecho?.ligar(trecho);
  try {
    const escritos = await trecho.ativo(() => repo.gravar(lote));
    trecho.fim();
    return escritos;
  } catch (error) {
    trecho.fim(error);
    throw error;
  }
}

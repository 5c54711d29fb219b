import { type AcessoAlterado, acessoAlterado } from '@hub/contracts';
import { executeOnPrisma, uuidv7 } from '@hub/database';
import { OUTBOX_INSERIR, outboxColumns } from '@hub/outbox';
import { type Db, type Tx, transacao } from './db';

/**
 * How the access service announces `acesso.alterado`, so every service drops its cached permissions
 * (docs/decisions/access-announced-through-an-outbox.md).
 */
export interface AccessEvents {
  /**
   * Written in the change's own transaction, to the outbox: the relay publishes it once the change
   * commits, and again until RabbitMQ confirms it. A change is never committed unannounced.
   */
  announce(tx: Tx, changes: AcessoAlterado[]): Promise<void>;
  /** After the commit: this replica forgets first, so its own next request already sees the change. */
  committed(changes: AcessoAlterado[]): void;
}

/** The announcements as outbox rows, in the transaction of the change they announce. */
export async function writeToOutbox(tx: Tx, changes: AcessoAlterado[]): Promise<void> {
  if (changes.length === 0) return;
  await executeOnPrisma(
    tx,
    OUTBOX_INSERIR,
    outboxColumns(
      changes.map((change) => ({
        exchange: acessoAlterado.exchange,
        routingKey: acessoAlterado.routingKey,
        messageId: uuidv7(),
        body: acessoAlterado.schema.parse(change),
      })),
    ),
  );
}

/**
 * `work` in one transaction, with what it announces (`anunciar`) written to the outbox inside it;
 * once it commits, this replica forgets those accesses at once.
 */
export async function comAnuncios<R>(
  db: Db,
  events: AccessEvents,
  work: (tx: Tx, anunciar: (change: AcessoAlterado) => void) => Promise<R>,
): Promise<R> {
  const anuncios: AcessoAlterado[] = [];
  const valor = await transacao(db, async (tx) => {
    const valor = await work(tx, (change) => anuncios.push(change));
    await events.announce(tx, anuncios);
    return valor;
  });
  events.committed(anuncios);
  return valor;
}

import path from 'node:path';
import { prismaStatement, uuidv7 } from '@hub/database';

/** The reference migration of the outbox table: copy it into a service's own migrations. */
export const OUTBOX_MIGRATIONS_DIR = path.join(__dirname, '..', 'sql');

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A table name that is safe to put into SQL text unquoted. */
export function outboxTable(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`"${name}" is not a plain lower-case SQL identifier`);
  return name;
}

/** One message to publish later, written in the same transaction as the change it announces. */
export interface OutboxMessage {
  exchange: string;
  routingKey: string;
  /** AMQP message-id: what consumers deduplicate on. */
  messageId: string;
  body: unknown;
  headers?: Record<string, unknown>;
}

/**
 * A parameterised INSERT of many outbox rows in one statement (one round trip, one NOTIFY).
 * Run it with the transaction's client: `client.query(text, values)` with pg; with Prisma, the
 * declared statement OUTBOX_INSERIR (`executeOnPrisma(tx, OUTBOX_INSERIR, outboxColumns(messages))`).
 */
export function outboxInsert(messages: OutboxMessage[], table = 'outbox'): { text: string; values: unknown[] } {
  const t = outboxTable(table);
  return {
    text:
      `insert into ${t} (${OUTBOX_COLUMNS.join(', ')}) ` +
      'select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::json[], $6::jsonb[])',
    values: outboxColumns(messages),
  };
}

/** The columns outboxColumns fills, in its order; their SQL array types are uuid, text, text, text, json, jsonb. */
export const OUTBOX_COLUMNS = ['id', 'exchange', 'routing_key', 'message_id', 'body', 'headers'] as const;

/**
 * The rows of `messages` as one array per column (OUTBOX_COLUMNS), for an `unnest` inside a larger
 * statement of the caller (e.g. one that also writes what the messages announce).
 */
export function outboxColumns(
  messages: OutboxMessage[],
): [string[], string[], string[], string[], string[], (string | null)[]] {
  return [
    messages.map(() => uuidv7()),
    messages.map((m) => m.exchange),
    messages.map((m) => m.routingKey),
    messages.map((m) => m.messageId),
    messages.map((m) => JSON.stringify(m.body)),
    messages.map((m) => (m.headers ? JSON.stringify(m.headers) : null)),
  ];
}

/**
 * outboxInsert's statement of the table `outbox`, declared for a Prisma client or transaction
 * (`executeOnPrisma`), its values `outboxColumns(messages)`: each service's statements test checks it.
 */
export const OUTBOX_INSERIR = prismaStatement({
  name: 'outbox_inserir',
  text: outboxInsert([]).text,
  parameters: ['uuid[]', 'text[]', 'text[]', 'text[]', 'json[]', 'jsonb[]'],
  columns: {},
});

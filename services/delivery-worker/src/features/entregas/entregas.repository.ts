import type { SqlPool } from '@hub/database';
import type { Prazos } from './linhas';
import { registroSql } from './registro.sql';
import { reivindicacaoSql } from './reivindicacao.sql';
import { varreduraSql } from './varredura.sql';

export * from './linhas';

/**
 * The worker's statements on hub_events. Each is ONE SQL statement over a batch of deliveries (its
 * rows passed as one JSON parameter): a statement is its own transaction, and batching is what
 * makes thousands of attempts per second possible (architecture §5). They are named prepared statements
 * (SqlPool), planned once per connection.
 */
export function entregasRepository(sql: SqlPool, prazos: Prazos) {
  return { ...reivindicacaoSql(sql, prazos), ...registroSql(sql), ...varreduraSql(sql, prazos) };
}
export type EntregasRepository = ReturnType<typeof entregasRepository>;

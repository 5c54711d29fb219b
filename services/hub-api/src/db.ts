export { isForeignKeyViolation, transacao } from '@hub/database';
export { createDb, type Db, type DbClient, type Tx } from '@hub/hub-data';

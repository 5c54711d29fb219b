import { prismaStatement } from '@hub/database';

/** Locks event type $1's row until the transaction ends; no row when the type does not exist. */
export const TIPO_TRAVAR = prismaStatement<{ id: string }>({
  name: 'tipo_de_evento_travar',
  text: 'select id from tipo_de_evento where id = $1::uuid for update',
  parameters: ['uuid'],
  columns: { id: 'uuid' },
});

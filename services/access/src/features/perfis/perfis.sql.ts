import { prismaStatement } from '@hub/database';
import type { PerfilDeAcesso } from '../../generated/prisma/client';

// The profiles' statements of fixed text, run on Prisma (runOnPrisma), checked by src/sql.test.ts.

type Travado = Pick<PerfilDeAcesso, 'id' | 'permissoes'>;

/** Profile $1 and its permissions, share-locked until the transaction ends. */
export const PERFIL_TRAVAR_COMPARTILHADO = prismaStatement<Travado>({
  name: 'perfil_travar_compartilhado',
  text: 'select id::text as id, permissoes from perfil_de_acesso where id = $1::uuid for share',
  parameters: ['uuid'],
  columns: { id: 'text', permissoes: 'jsonb' },
});

/** Profile $1 and its permissions, locked until the transaction ends. */
export const PERFIL_TRAVAR = prismaStatement<Travado>({
  name: 'perfil_travar',
  text: 'select id::text as id, permissoes from perfil_de_acesso where id = $1::uuid for update',
  parameters: ['uuid'],
  columns: { id: 'text', permissoes: 'jsonb' },
});

/** Deletes profile $1 unless a live access holds it. */
export const PERFIL_EXCLUIR_SEM_USO = prismaStatement({
  name: 'perfil_excluir_sem_uso',
  text: `delete from perfil_de_acesso p
        where p.id = $1::uuid
          and not exists (select 1 from acesso a where a.perfil_de_acesso_id = p.id and a.excluido_em is null)`,
  parameters: ['uuid'],
  columns: {},
});

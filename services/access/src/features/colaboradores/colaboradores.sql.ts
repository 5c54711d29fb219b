import { prismaStatement } from '@hub/database';

// The collaborators' projection statements, run on Prisma (runOnPrisma), checked by src/sql.test.ts.

/** Collaborator $1's projection ($2 e-mail, $3 name, $4 function, $5 active, $6 removed), if version $7 is newer. */
export const COLABORADOR_APLICAR = prismaStatement({
  name: 'colaborador_aplicar',
  text: `insert into colaborador (termoauth_id, email, nome, funcao_id, ativo, removido, versao, atualizado_em)
        values ($1, $2, $3, $4, $5, $6, $7, now())
        on conflict (termoauth_id) do update set
          email = excluded.email, nome = excluded.nome, funcao_id = excluded.funcao_id, ativo = excluded.ativo,
          removido = excluded.removido, versao = excluded.versao, atualizado_em = excluded.atualizado_em
        where colaborador.versao < excluded.versao`,
  parameters: ['text', 'text', 'text', 'text', 'bool', 'bool', 'int8'],
  columns: {},
});

/** Unlinks collaborator $1's access, when removed ($2) or moved to another e-mail than $3. */
export const COLABORADOR_DESVINCULAR = prismaStatement<{ email: string }>({
  name: 'colaborador_desvincular',
  text: `update acesso set termoauth_id = null, nome = null, atualizado_em = now()
        where termoauth_id = $1 and ($2 or email <> $3)
        returning email`,
  parameters: ['text', 'bool', 'text'],
  columns: { email: 'text' },
});

/** Links e-mail $3's live access to collaborator $1 (name $2) when anything differs. */
export const COLABORADOR_VINCULAR = prismaStatement<{ email: string }>({
  name: 'colaborador_vincular',
  text: `update acesso set termoauth_id = $1, nome = $2, atualizado_em = now()
        where email = $3 and excluido_em is null
          and (termoauth_id is distinct from $1 or nome is distinct from $2)
        returning email`,
  parameters: ['text', 'text', 'text'],
  columns: { email: 'text' },
});

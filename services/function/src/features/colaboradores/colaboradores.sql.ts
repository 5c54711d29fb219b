import { prismaStatement } from '@hub/database';

/**
 * Collaborator $1's projection ($2 e-mail, $3 name, $4 function, $5 active, $6 removed, $8 its
 * announcement's fragment), if version $7 is newer than the stored one. Run on Prisma, checked by src/sql.test.ts.
 */
export const COLABORADOR_APLICAR = prismaStatement({
  name: 'colaborador_aplicar',
  text: `insert into colaborador (termoauth_id, email, nome, funcao_id, ativo, removido, versao, anuncio, atualizado_em)
        values ($1, $2, $3, $4, $5, $6, $7, $8, now())
        on conflict (termoauth_id) do update set
          email = excluded.email, nome = excluded.nome, funcao_id = excluded.funcao_id, ativo = excluded.ativo,
          removido = excluded.removido, versao = excluded.versao, anuncio = excluded.anuncio,
          atualizado_em = excluded.atualizado_em
        where colaborador.versao < excluded.versao`,
  parameters: ['text', 'text', 'text', 'text', 'bool', 'bool', 'int8', 'text'],
  columns: {},
});

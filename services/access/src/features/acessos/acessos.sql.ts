import { prismaStatement } from '@hub/database';
import type { RawAcesso } from './acessos.repository';

// The accesses' statements of fixed text, run on Prisma (runOnPrisma), checked by src/sql.test.ts.

/** Holds e-mail $1's lock until the transaction ends ($1: `acesso-email:<e-mail>`). */
export const ACESSO_TRAVAR_EMAIL = prismaStatement({
  name: 'acesso_travar_email',
  text: 'select from pg_advisory_xact_lock(hashtext($1))',
  parameters: ['text'],
  columns: {},
});

/** A page of live accesses ($1 skipped, $2 at most) with the total, by the partial index on (perfil, email). */
export const ACESSO_PAGINA = prismaStatement<RawAcesso & { total: bigint }>({
  name: 'acesso_pagina',
  text: `select *, count(*) over () as total from acesso where excluido_em is null
        order by perfil, email, id offset $1 limit $2`,
  parameters: ['int8', 'int8'],
  columns: {
    id: 'uuid',
    email: 'text',
    perfil: 'text',
    ativo: 'bool',
    master: 'bool',
    termoauth_id: 'text',
    nome: 'text',
    perfil_de_acesso_id: 'uuid',
    bloqueado_ate: 'timestamptz',
    ultimo_login_em: 'timestamptz',
    excluido_em: 'timestamptz',
    criado_em: 'timestamptz',
    atualizado_em: 'timestamptz',
    total: 'int8',
  },
});

/** Live access $1's row locked for a change (no key update), and its profile. */
export const ACESSO_TRAVAR_PARA_ALTERAR = prismaStatement<{ perfil_de_acesso_id: string | null }>({
  name: 'acesso_travar_para_alterar',
  text: `select perfil_de_acesso_id::text as perfil_de_acesso_id from acesso
        where id = $1::uuid and excluido_em is null for no key update`,
  parameters: ['uuid'],
  columns: { perfil_de_acesso_id: 'text' },
});

/** Share-locks profile $1 until the transaction ends. */
export const ACESSO_TRAVAR_PERFIL = prismaStatement({
  name: 'acesso_travar_perfil',
  text: 'select from perfil_de_acesso where id = $1::uuid for share',
  parameters: ['uuid'],
  columns: {},
});

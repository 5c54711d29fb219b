import { permissoesSchema } from '@hub/contracts';
import { nomeTexto } from '@hub/http';
import { z } from 'zod';
import type { PerfilDeAcesso } from '../../generated/prisma/client';
import { iso, normalizePermissoes } from '../acessos/acessos.model';

export const NOME_MAX = 120;
/** Trimmed, NFC, visible; unique without regard to case or zero-width characters (migration 002). */
export const nomeDoPerfil = nomeTexto(NOME_MAX);
export const perfilCriar = z.object({ nome: nomeDoPerfil, permissoes: permissoesSchema }).strict();
export const perfilAtualizar = z
  .object({ nome: nomeDoPerfil.optional(), permissoes: permissoesSchema.optional() })
  .strict();

export const perfilSchema = z.object({
  id: z.string(),
  nome: z.string(),
  permissoes: permissoesSchema,
  criado_em: z.string(),
  atualizado_em: z.string(),
});

export const toPerfil = (perfil: PerfilDeAcesso) => ({
  id: perfil.id,
  nome: perfil.nome,
  permissoes: normalizePermissoes(perfil.permissoes),
  criado_em: iso(perfil.criadoEm),
  atualizado_em: iso(perfil.atualizadoEm),
});

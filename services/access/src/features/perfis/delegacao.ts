import { ACOES, type AcessoAtual, AREAS } from '@hub/contracts';
import { forbidden } from '@hub/http';
import { normalizePermissoes } from '../acessos/acessos.model';

/** Who asks for a change of permissions: what the guard resolved for the caller. */
export type Chamador = Pick<AcessoAtual, 'id' | 'master' | 'permissoes'>;

/** Whether every action that `permissoes` grants is granted to the caller too (a master holds all). */
export function dentroDasPermissoes(permissoes: unknown, chamador: Chamador): boolean {
  if (chamador.master) return true;
  const pedidas = normalizePermissoes(permissoes);
  const proprias = normalizePermissoes(chamador.permissoes);
  return AREAS.every((area) => ACOES.every((acao) => !pedidas[area][acao] || proprias[area][acao]));
}

/**
 * No escalation through delegation: a non-master hands out, or edits, only permissions they hold
 * themselves; otherwise two delegates could raise each other, or one could raise the profile it holds.
 */
export function exigirDentroDasPermissoes(permissoes: unknown, chamador: Chamador, oQue: string): void {
  if (!dentroDasPermissoes(permissoes, chamador)) {
    throw forbidden(`${oQue} grants permissions the caller does not hold`, 'permissoes_excedidas');
  }
}

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

/** An access as the rule of reach sees it: whose it is and what its profile grants. */
export interface AcessoAlvo {
  id: string;
  master: boolean;
  perfilDeAcesso: { permissoes: unknown } | null;
}

/**
 * The one rule for changing somebody's access, whatever the route (its profile, e-mail, state or
 * existence): a master's access is never changed; a non-master never changes their own, and
 * changes another only when its profile is within their own permissions. Otherwise a delegate
 * could strip, switch off, delete or re-address an access stronger than theirs.
 */
export function exigirAlcance(alvo: AcessoAlvo, chamador: Chamador, verbo: string, codigoProprio: string): void {
  if (alvo.master) throw forbidden(`the access of a master cannot be ${verbo}`, 'acesso_master_protegido');
  if (!chamador.master && chamador.id === alvo.id) {
    throw forbidden(`one's own access cannot be ${verbo} by oneself; only a master may`, codigoProprio);
  }
  exigirDentroDasPermissoes(alvo.perfilDeAcesso?.permissoes, chamador, 'the access profile of this access');
}

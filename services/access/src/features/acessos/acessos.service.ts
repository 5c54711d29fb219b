import { conflict, forbidden, invalidField, notFound } from '@hub/http';
import { isUniqueViolation } from '@hub/database';
import type { AccessEvents } from '../../events';
import type { Acesso } from '../../generated/prisma/client';
import type { AcessosRepository } from './acessos.repository';
import { emailProblem, normalizeEmail, PERFIL_COLABORADOR } from './acessos.model';

/** The rules of spec §3 (Access) and §4.1, in domain words. */
export class AcessosService {
  constructor(
    private readonly repository: AcessosRepository,
    private readonly events: AccessEvents,
    private readonly companyDomain: string,
  ) {}

  async get(id: string): Promise<Acesso> {
    const acesso = await this.repository.byId(id);
    if (!acesso) throw notFound('access');
    return acesso;
  }

  async create(input: { email: string; perfil: string }): Promise<Acesso> {
    const email = this.validEmail(input.email);
    if (input.perfil !== PERFIL_COLABORADOR) {
      throw invalidField(
        '/perfil',
        'perfil_invalido',
        `only the perfil "${PERFIL_COLABORADOR}" is accepted on creation`,
      );
    }
    const acesso = await this.repository
      .create({ email, perfil: PERFIL_COLABORADOR, master: false })
      .catch(rethrowEmailTaken);
    await this.events.changed({ email, acesso_id: acesso.id, motivo: 'criado' });
    return acesso;
  }

  async update(id: string, input: { email?: string | null; ativo?: boolean | null }): Promise<Acesso> {
    const acesso = await this.changeable(id, 'changed');
    const email = input.email === null || input.email === undefined ? undefined : this.validEmail(input.email);
    const ativo = input.ativo ?? undefined;
    const changes = {
      ...(email !== undefined && email !== acesso.email ? { email } : {}),
      ...(ativo !== undefined && ativo !== acesso.ativo ? { ativo } : {}),
    };
    if (Object.keys(changes).length === 0) return acesso;
    const updated = await this.repository.update(id, changes).catch(rethrowEmailTaken);
    await this.events.changed({ email: acesso.email, acesso_id: id, motivo: 'alterado' });
    if (updated.email !== acesso.email)
      await this.events.changed({ email: updated.email, acesso_id: id, motivo: 'alterado' });
    return updated;
  }

  async delete(id: string): Promise<void> {
    const acesso = await this.changeable(id, 'deleted');
    if (acesso.termoauthId !== null) {
      throw conflict(
        'acesso_vinculado',
        'a collaborator is linked to this access; it is removed in the identity service only',
      );
    }
    await this.repository.markDeleted(id);
    await this.events.changed({ email: acesso.email, acesso_id: id, motivo: 'excluido' });
  }

  private async changeable(id: string, verb: string): Promise<Acesso> {
    const acesso = await this.get(id);
    if (acesso.master) throw forbidden(`the access of a master cannot be ${verb}`, 'acesso_master_protegido');
    return acesso;
  }

  private validEmail(raw: string): string {
    const email = normalizeEmail(raw);
    const problem = emailProblem(email, this.companyDomain);
    if (problem) throw invalidField('/email', problem.codigo, problem.mensagem);
    return email;
  }
}

function rethrowEmailTaken(error: unknown): never {
  if (isUniqueViolation(error)) throw conflict('email_em_uso', 'another access already has this e-mail');
  throw error;
}

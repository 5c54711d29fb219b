import type { components } from './generated/schema.js';

export type Problema = components['schemas']['Problema'];

/** The hub refused the request (4xx), or kept failing (5xx, 429) past the retries: its problem+json. */
export class HubError extends Error {
  override readonly name = 'HubError';
  /** The body the hub answered (problem+json); `codigo` "desconhecido" when it was not one. */
  readonly problem: Problema;
  constructor(
    readonly status: number,
    problem: Partial<Problema> | undefined,
    /** How many requests were sent. */
    readonly attempts: number,
    /** The request refused: its method and the route as the OpenAPI document names it (`/entrega/{id}`). */
    readonly request?: { method: string; path: string },
  ) {
    const codigo = problem?.codigo ?? 'desconhecido';
    super(`${status} ${codigo}: ${problem?.detail ?? 'the hub answered without a problem body'}`);
    this.problem = {
      type: problem?.type ?? 'about:blank',
      title: problem?.title ?? '',
      status: problem?.status ?? status,
      detail: problem?.detail ?? '',
      codigo,
      ...(problem?.erros ? { erros: problem.erros } : {}),
      ...(problem?.erro_id ? { erro_id: problem.erro_id } : {}),
    };
  }
  /** The stable snake_case code of the refusal (e.g. `dados_invalidos`). */
  get codigo(): string {
    return this.problem.codigo;
  }
  /** On 422: what is wrong and where (`caminho` is a JSON pointer), at most 50. */
  get erros(): NonNullable<Problema['erros']> {
    return this.problem.erros ?? [];
  }
}

/** The hub could not be reached (connection refused, reset, DNS, timeout) on any attempt. */
export class HubNetworkError extends Error {
  override readonly name = 'HubNetworkError';
  constructor(
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    super(`the hub could not be reached after ${attempts} attempts: ${(cause as Error)?.message ?? cause}`);
  }
}

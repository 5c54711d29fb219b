import { notFound, type PageRequest, page } from '@hub/http';
import { iso } from '../../schemas';
import type { TentativaLinha, TentativasRepository } from './tentativas.repository';
import type { FiltroDeTentativas, TentativaDto } from './tentativas.schemas';

/** Only text headers are kept: what the worker stored is what was sent. */
const cabecalhos = (json: unknown): Record<string, string> =>
  json && typeof json === 'object' && !Array.isArray(json)
    ? Object.fromEntries(
        Object.entries(json).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      )
    : {};

export const tentativaDto = (t: TentativaLinha): TentativaDto => ({
  id: t.id,
  entrega_id: t.entregaId,
  numero: t.numero,
  iniciada_em: iso(t.iniciadaEm),
  duracao_ms: t.duracaoMs,
  status_http: t.statusHttp,
  sucesso: t.sucesso,
  resposta: t.resposta,
  erro: t.erro,
  cabecalhos: cabecalhos(t.cabecalhos),
});

/** The attempts of deliveries, for operators (architecture §4, Tentativa). */
export function tentativasService(repository: TentativasRepository) {
  return {
    async listar(filtro: FiltroDeTentativas, request: PageRequest) {
      const { itens, total } = await repository.listar(filtro, request);
      return page(itens.map(tentativaDto), request, total);
    },
    filtrar: async (filtro: FiltroDeTentativas) => (await repository.filtrar(filtro)).map(tentativaDto),
    async buscar(id: string) {
      const tentativa = await repository.buscar(id);
      if (!tentativa) throw notFound('attempt');
      return tentativaDto(tentativa);
    },
  };
}
export type TentativasService = ReturnType<typeof tentativasService>;

import { notFound, type PageRequest, page } from '@hub/http';
import { iso } from '../../schemas';
import type { EventoRecusadoDto } from '../eventos/eventos.schemas';
import type {
  EventoRecusadoLinha,
  EventosRecusadosRepository,
  FiltroDeRecusados,
} from './eventos-recusados.repository';

export const eventoRecusadoDto = (r: EventoRecusadoLinha): EventoRecusadoDto => ({
  id: r.id,
  codigo: r.codigo,
  status_http: r.statusHttp,
  detalhe: r.detalhe,
  erros: r.erros as EventoRecusadoDto['erros'],
  corpo: r.corpo,
  corpo_truncado: r.corpoTruncado,
  tipo_de_evento_id: r.tipoDeEventoId,
  versao_do_esquema: r.versaoDoEsquema,
  aplicativo_id: r.aplicativoId,
  client_id: r.clientId,
  publicado_pelo_email: r.publicadoPeloEmail,
  recebido_em: iso(r.recebidoEm),
});

/** What was refused at publication, why, and who sent it (architecture §4, Evento recusado). */
export function eventosRecusadosService(repository: EventosRecusadosRepository) {
  return {
    async listar(request: PageRequest) {
      const { itens, total } = await repository.listar(request);
      return page(itens.map(eventoRecusadoDto), request, total);
    },
    filtrar: async (filtro: FiltroDeRecusados) => (await repository.filtrar(filtro)).map(eventoRecusadoDto),
    async buscar(id: string) {
      const recusado = await repository.buscar(id);
      if (!recusado) throw notFound('refused event');
      return eventoRecusadoDto(recusado);
    },
  };
}
export type EventosRecusadosService = ReturnType<typeof eventosRecusadosService>;

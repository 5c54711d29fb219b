import { horaDoResumo, percentilDaLatencia } from '@hub/hub-data';
import { type PageRequest, page } from '@hub/http';
import type { DbClient } from '../../db';
import { iso } from '../../schemas';
import { contadoresDosEventos } from './contadores.repository';
import type { EventosRepository, FiltroDeEventos, LinhaDeEvento } from './eventos.repository';
import type { EventoDto, resumoSchema } from './eventos.schemas';
import type { ResumoRepository } from './resumo.repository';
import type { z } from 'zod';

const HORA_MS = 3_600_000;
/** The summary's window: 24 one-hour bands, the current hour the last (contract §8). */
export const HORAS_DO_RESUMO = 24;

/** The panel's reads of events: pages, filters and the summary (contract §4.3 r1, r3, r4). */
export interface EventosServiceDeps {
  db: DbClient;
  repositories: { eventos: EventosRepository; resumo: ResumoRepository };
  relogio?: () => Date;
}

export function eventosService({ db, repositories, relogio = () => new Date() }: EventosServiceDeps) {
  async function comContadores(linhas: LinhaDeEvento[]): Promise<EventoDto[]> {
    const contadores = await contadoresDosEventos(
      db,
      linhas.map((l) => l.id),
    );
    return linhas.map((l) => ({
      id: l.id,
      tipo_de_evento_id: l.tipo_de_evento_id,
      tipo_de_evento_nome: l.tipo_de_evento_nome,
      versao_do_esquema: l.versao_do_esquema,
      aplicativo_publicador_id: l.aplicativo_publicador_id,
      aplicativo_publicador_nome: l.aplicativo_publicador_nome,
      entidade_id: l.entidade_id,
      ocorrido_em: iso(l.ocorrido_em),
      recebido_em: iso(l.recebido_em),
      publicado_pelo_email: l.publicado_pelo_email,
      ...(contadores.get(l.id) as NonNullable<ReturnType<typeof contadores.get>>),
    }));
  }

  return {
    async listar(request: PageRequest) {
      const { itens, total } = await repositories.eventos.listar(request);
      return page(await comContadores(itens), request, total);
    },

    filtrar: async (filtro: FiltroDeEventos) => comContadores(await repositories.eventos.filtrar(filtro)),

    async resumo(): Promise<z.infer<typeof resumoSchema>> {
      const atual = horaDoResumo(relogio());
      const primeira = new Date(atual.getTime() - (HORAS_DO_RESUMO - 1) * HORA_MS);
      const [horas, latencias, fila, ativos] = await Promise.all([
        repositories.resumo.porHora(primeira, atual),
        repositories.resumo.latenciasPorHora(primeira, atual),
        repositories.resumo.fila(),
        repositories.resumo.ativos(),
      ]);
      const porHora = new Map(horas.map((h) => [h.hora.getTime(), h]));
      const baldesPorHora = new Map<number, Map<number, number>>();
      for (const l of latencias) {
        const baldes = baldesPorHora.get(l.hora.getTime()) ?? new Map<number, number>();
        baldesPorHora.set(l.hora.getTime(), baldes.set(l.balde, l.entregas));
      }
      const bandas = Array.from({ length: HORAS_DO_RESUMO }, (_, i) => {
        const hora = primeira.getTime() + i * HORA_MS;
        const totais = porHora.get(hora);
        const baldes = baldesPorHora.get(hora) ?? new Map<number, number>();
        return {
          hora: new Date(hora).toISOString(),
          eventos: totais?.eventos ?? 0,
          recusados: totais?.recusados ?? 0,
          entregas_com_falha: totais?.tentativas_com_falha ?? 0,
          entregues: totais?.entregas_concluidas ?? 0,
          latencia_p50_ms: percentilDaLatencia(baldes, 50),
          latencia_p99_ms: percentilDaLatencia(baldes, 99),
        };
      });
      const soma = (campo: 'eventos' | 'recusados' | 'entregas_com_falha' | 'entregues') =>
        bandas.reduce((total, banda) => total + banda[campo], 0);
      return {
        eventos_nas_ultimas_24_horas: soma('eventos'),
        recusados_nas_ultimas_24_horas: soma('recusados'),
        entregues_nas_ultimas_24_horas: soma('entregues'),
        tentativas_com_falha_nas_ultimas_24_horas: soma('entregas_com_falha'),
        entregas_pendentes: fila.pendentes,
        entregas_aguardando_nova_tentativa: fila.aguardando,
        entregas_na_fila_de_erro: fila.erro,
        aplicativos_ativos: ativos.aplicativos,
        tipos_de_evento_ativos: ativos.tipos,
        assinaturas_ativas: ativos.assinaturas,
        por_hora: bandas.map(({ entregues: _, ...banda }) => banda),
      };
    },
  };
}
export type EventosService = ReturnType<typeof eventosService>;

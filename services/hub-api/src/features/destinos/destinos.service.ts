import { DELIVERY_TOPOLOGY } from '@hub/contracts';
import { percentil } from '@hub/hub-data';
import type { Logger } from '@hub/log';
import { notFound, type PageRequest, page } from '@hub/http';
import { iso } from '../../schemas';
import type { DestinoLinha, DestinosRepository } from './destinos.repository';
import { type CIRCUITOS, type DestinoDto, HISTORICO_MOSTRADO } from './destinos.schemas';

type Situacao = (typeof CIRCUITOS)[number];

const HORA_MS = 3_600_000;

/**
 * Destinations for operators (architecture §4, Destino): their limits and pause, which every delivery
 * worker reads again within seconds, and what delivering to them looked like in the last hour.
 */
export interface DestinosServiceDeps {
  repository: DestinosRepository;
  relogio?: () => Date;
  logger?: Logger;
}

export function destinosService({ repository, relogio = () => new Date(), logger }: DestinosServiceDeps) {
  async function comFiguras(destinos: DestinoLinha[]): Promise<DestinoDto[]> {
    const ids = destinos.map((d) => d.id);
    const [figuras, historicos] = await Promise.all([
      repository.figuras(ids, new Date(relogio().getTime() - HORA_MS)),
      repository.historico(ids, HISTORICO_MOSTRADO),
    ]);
    return destinos.map((d) => {
      const f = figuras.get(d.id);
      const duracoes = f?.duracoes ?? [];
      return {
        id: d.id,
        origem: d.origem,
        assinaturas: f?.assinaturas ?? 0,
        em_andamento: f?.em_andamento ?? 0,
        concorrencia_maxima: d.concorrenciaMaxima,
        limite_por_segundo: d.limitePorSegundo,
        pausado: d.pausado,
        isolamento: d.isolamento
          ? {
              situacao: d.isolamento as 'isolada' | 'saindo' | 'removendo',
              motivo: d.isolamentoMotivo as 'retida' | 'acumulo' | null,
              desde: iso(d.isolamentoDesde ?? d.atualizadoEm),
              fila: DELIVERY_TOPOLOGY.filaDoDestino(d.id),
            }
          : null,
        circuito: {
          situacao: d.circuito as Situacao,
          desde: d.circuitoDesde ? iso(d.circuitoDesde) : null,
          aberto_ate: d.circuito === 'aberto' && d.circuitoAbertoAte ? iso(d.circuitoAbertoAte) : null,
          aberturas_seguidas: d.circuitoAberturas,
          historico: (historicos.get(d.id) ?? []).map((t) => ({
            em: iso(t.em),
            de: t.de as Situacao,
            para: t.para as Situacao,
            motivo: t.motivo,
            detalhe: t.detalhe,
            falhas: t.falhas,
            tentativas: t.tentativas,
            aberto_ate: t.aberto_ate ? iso(t.aberto_ate) : null,
            por: t.por,
          })),
        },
        tentativas_na_ultima_hora: f?.tentativas ?? 0,
        falhas_na_ultima_hora: f?.falhas ?? 0,
        latencia_p50_ms: percentil(duracoes, 0.5),
        latencia_p99_ms: percentil(duracoes, 0.99),
        criado_em: iso(d.criadoEm),
        atualizado_em: iso(d.atualizadoEm),
      };
    });
  }

  async function existente(id: string): Promise<DestinoLinha> {
    const destino = await repository.buscar(id);
    if (!destino) throw notFound('destination');
    return destino;
  }

  async function alterar(id: string, dados: Parameters<DestinosRepository['atualizar']>[1]) {
    await existente(id);
    const [destino] = await comFiguras([await repository.atualizar(id, dados)]);
    return destino!;
  }

  return {
    async listar(request: PageRequest) {
      const { itens, total } = await repository.listar(request);
      return page(await comFiguras(itens), request, total);
    },
    buscar: async (id: string) => (await comFiguras([await existente(id)]))[0]!,
    atualizar: (id: string, body: { concorrencia_maxima?: number; limite_por_segundo?: number | null }) =>
      alterar(id, {
        ...(body.concorrencia_maxima === undefined ? {} : { concorrenciaMaxima: body.concorrencia_maxima }),
        ...(body.limite_por_segundo === undefined ? {} : { limitePorSegundo: body.limite_por_segundo }),
      }),
    pausar: (id: string) => alterar(id, { pausado: true }),
    // Stamped: the paused jobs still cycle through a delay queue for a while, and the workers'
    // sweeper leaves this destination's deliveries alone until they are back.
    retomar: (id: string) => alterar(id, { pausado: false, retomadoEm: relogio() }),
    /**
     * Closes the circuit by hand (an operator who knows the subscriber is back): its deliveries are
     * attempted again within a worker's refresh. Closing a closed circuit changes nothing, as
     * pausing a paused destination does.
     */
    async fecharCircuito(id: string, por: string | null) {
      const { origem } = await existente(id);
      const de = await repository.fecharCircuito(id, por);
      if (de) logger?.info({ destino_id: id, origem, de, por }, `destination circuit closed by hand (it was ${de})`);
      const [destino] = await comFiguras([await existente(id)]);
      return destino!;
    },
  };
}
export type DestinosService = ReturnType<typeof destinosService>;

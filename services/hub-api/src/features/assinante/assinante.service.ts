import { notFound } from '@hub/http';
import type { AssinaturasRepository } from '../assinaturas/assinaturas.repository';
import type { AssinaturasService } from '../assinaturas/assinaturas.service';
import type { EntregasService } from '../entregas/entregas.service';
import { paraOAssinante } from './proprias.service';

export interface AssinanteDeps {
  /** The panel's services: the same reads, mapping and resend, narrowed to one application here. */
  entregas: EntregasService;
  assinaturas: AssinaturasService;
  /** Whose a subscription is, for the list's assinatura_id. */
  donoDaAssinatura: Pick<AssinaturasRepository, 'doAssinante'>;
}

type ListaDeEntregas = Omit<Parameters<EntregasService['listar']>[0], 'aplicativo_assinante_id'>;
type ListaDeAssinaturas = Omit<Parameters<AssinaturasService['listar']>[0], 'aplicativo_assinante_id'> &
  Parameters<AssinaturasService['listar']>[1];

/**
 * What a subscribing application sees of the hub (docs/decisions/subscriber-reads.md): the deliveries of its own subscriptions and those subscriptions, by the
 * application of the token. Anything of another application is not found, as if it did not exist.
 */
export function assinanteService({ entregas, assinaturas, donoDaAssinatura }: AssinanteDeps) {
  /** A subscription of the application, deleted ones too (their deliveries are still its own). */
  async function exigirAssinaturaPropria(assinaturaId: string, aplicativoId: string): Promise<void> {
    if (!(await donoDaAssinatura.doAssinante(assinaturaId, aplicativoId))) throw notFound('subscription');
  }

  return {
    async listarEntregas(aplicativoId: string, query: ListaDeEntregas) {
      if (query.assinatura_id) await exigirAssinaturaPropria(query.assinatura_id, aplicativoId);
      return entregas.listar({ ...query, aplicativo_assinante_id: aplicativoId });
    },

    buscarEntrega: (aplicativoId: string, id: string) => entregas.buscar(id, { aplicativo_assinante_id: aplicativoId }),

    reenviarEntrega: (aplicativoId: string, id: string, requestId: string | null) =>
      entregas.reenviar(id, requestId, { aplicativo_assinante_id: aplicativoId }),

    async listarAssinaturas(aplicativoId: string, { pagina, tamanho, ...filtro }: ListaDeAssinaturas) {
      const lista = await assinaturas.listar({ ...filtro, aplicativo_assinante_id: aplicativoId }, { pagina, tamanho });
      return { ...lista, itens: lista.itens.map(paraOAssinante) };
    },
  };
}
export type AssinanteService = ReturnType<typeof assinanteService>;

import { uuidv7 } from '@hub/database';
import { origemDaUrl } from '@hub/destinations';
import type { PageRequest } from '@hub/http';
import { skipTake } from '@hub/http';
import type { DbClient } from '../../db';

/** Figures of destinations that come from other tables, read from their indexes. */
interface Figuras {
  id: string;
  assinaturas: number;
  em_andamento: number;
  tentativas: number;
  falhas: number;
  duracoes: number[] | null;
}

export function destinosRepository(db: DbClient) {
  return {
    async listar(page: PageRequest, cliente: DbClient = db) {
      const [itens, total] = await Promise.all([
        cliente.destino.findMany({ orderBy: [{ origem: 'asc' }], ...skipTake(page) }),
        cliente.destino.count(),
      ]);
      return { itens, total };
    },
    buscar: (id: string, cliente: DbClient = db) => cliente.destino.findUnique({ where: { id } }),
    atualizar: (
      id: string,
      dados: { concorrenciaMaxima?: number; limitePorSegundo?: number | null; pausado?: boolean; retomadoEm?: Date },
      cliente: DbClient = db,
    ) => cliente.destino.update({ where: { id }, data: { ...dados, atualizadoEm: new Date() } }),

    /** The row of a subscription URL's origin, created when missing (in the caller's transaction). */
    async garantir(url: string, cliente: DbClient = db): Promise<void> {
      const agora = new Date();
      await cliente.destino.createMany({
        data: [{ id: uuidv7(), origem: origemDaUrl(url), criadoEm: agora, atualizadoEm: agora }],
        skipDuplicates: true,
      });
    },

    /**
     * Subscriptions, attempts in flight (as the workers last reported them, their reports still
     * valid) and the last hour's attempts of each destination given.
     */
    async figuras(ids: string[], desde: Date, cliente: DbClient = db): Promise<Map<string, Figuras>> {
      if (ids.length === 0) return new Map();
      const linhas = await cliente.$queryRaw<Figuras[]>`
        select d.id::text as id,
          (select count(*) from assinatura a
            where origem_da_url(a.url_de_destino) = d.origem and a.excluida_em is null)::int as assinaturas,
          coalesce((select sum(v.em_andamento) from destino_em_andamento v
            where v.destino_id = d.id and v.valido_ate > now()), 0)::int as em_andamento,
          coalesce((select sum(m.tentativas) from destino_minuto m where m.destino_id = d.id and m.minuto >= ${desde}), 0)::int as tentativas,
          coalesce((select sum(m.falhas) from destino_minuto m where m.destino_id = d.id and m.minuto >= ${desde}), 0)::int as falhas,
          (select array_agg(soma order by balde) from (
            select b.balde, sum(b.n)::int as soma
            from destino_minuto m, unnest(m.duracoes) with ordinality as b(n, balde)
            where m.destino_id = d.id and m.minuto >= ${desde}
            group by b.balde) as baldes) as duracoes
        from destino d
        where d.id = any(${ids}::uuid[])`;
      return new Map(linhas.map((linha) => [linha.id, linha]));
    },
  };
}
export type DestinosRepository = ReturnType<typeof destinosRepository>;
export type DestinoLinha = NonNullable<Awaited<ReturnType<DestinosRepository['buscar']>>>;

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

/** One transition of a circuit (destino_circuito). */
export interface Transicao {
  em: Date;
  de: string;
  para: string;
  motivo: string;
  detalhe: string;
  falhas: number | null;
  tentativas: number | null;
  aberto_ate: Date | null;
  por: string | null;
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

    /** The latest transitions of each destination's circuit, newest first (the index on (destino_id, em)). */
    async historico(ids: string[], limite: number, cliente: DbClient = db): Promise<Map<string, Transicao[]>> {
      const porDestino = new Map<string, Transicao[]>();
      if (ids.length === 0) return porDestino;
      const linhas = await cliente.$queryRaw<(Transicao & { destino_id: string })[]>`
        select t.destino_id::text as destino_id, t.em, t.de, t.para, t.motivo, t.detalhe, t.falhas, t.tentativas,
               t.aberto_ate, t.por
          from unnest(${ids}::uuid[]) as d(id)
          cross join lateral (
            select * from destino_circuito c where c.destino_id = d.id order by c.em desc, c.id desc limit ${limite}::int
          ) as t
         order by t.destino_id, t.em desc, t.id desc`;
      for (const { destino_id, ...t } of linhas) {
        const lista = porDestino.get(destino_id) ?? [];
        lista.push(t);
        porDestino.set(destino_id, lista);
      }
      return porDestino;
    },

    /**
     * Closes a destination's circuit by hand, with its line of history: the workers obey within a
     * refresh, and a probe under way no longer counts (its token is gone). Nothing when it is closed
     * already. Gives the state it left (null: it was closed).
     */
    async fecharCircuito(id: string, por: string | null, cliente: DbClient = db): Promise<string | null> {
      const mudou = await cliente.$queryRaw<{ de: string }[]>`
        with antes as (select id, circuito from destino where id = ${id}::uuid for update),
        mudou as (
          update destino d
             set circuito = 'fechado', circuito_desde = now(), circuito_aberturas = 0,
                 circuito_aberto_ate = null, circuito_sonda = null, circuito_sonda_ate = null
            from antes a
           where d.id = a.id and a.circuito <> 'fechado'
          returning d.id, d.circuito_desde, a.circuito as de
        ),
        historico as (
          insert into destino_circuito (id, destino_id, em, de, para, motivo, detalhe, por)
          select ${uuidv7()}::uuid, id, circuito_desde, de, 'fechado', 'manual', 'closed by hand by an operator', ${por}
            from mudou
        )
        select de from mudou`;
      return mudou[0]?.de ?? null;
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

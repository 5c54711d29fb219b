import { uuidv7 } from '@hub/database';
import { conflict, notFound, type PageRequest, page, unprocessable } from '@hub/http';
import { dtoDaReproducao, type ReproducaoRepository } from './reproducao.repository';
import type { ReproducaoCriar, ReproducaoDto, ReproducoesQuery } from './reproducao.schemas';

export interface ReproducaoDeps {
  repo: ReproducaoRepository;
  /** REPLAY_MAX_EVENTS: a replay whose range holds more stored events is refused. */
  maximoDeEventos: number;
  /** Wakes the runner (jobs/reproducao.job.ts), so a new replay starts at once. */
  acordar: () => void;
  relogio?: () => Date;
}

/** Who asks: a panel user (any subscription) or a subscribing application (its own only). */
export type Solicitante = { email: string } | { aplicativoId: string; clientId: string };

/**
 * Replays (docs/decisions/replay-engine.md). Asking checks the subscription and the size of the range
 * and records the replay (pendente); the runner does the work in batches in the background.
 */
export function reproducaoService(deps: ReproducaoDeps) {
  const { repo } = deps;
  const relogio = deps.relogio ?? (() => new Date());

  async function buscar(id: string): Promise<ReproducaoDto> {
    const reproducao = await repo.buscar(id);
    if (!reproducao) throw notFound('replay');
    return dtoDaReproducao(reproducao);
  }

  return {
    buscar,

    async listar(query: ReproducoesQuery) {
      const { pagina, tamanho, ...filtro } = query;
      const { itens, total } = await repo.listar(filtro, { pagina, tamanho });
      return page(itens.map(dtoDaReproducao), { pagina, tamanho }, total);
    },

    /** The replays of a subscription of the application's own, with their progress; another's is not found. */
    async listarDoAplicativo(assinaturaId: string, aplicativoId: string, query: PageRequest) {
      const assinatura = await repo.assinatura(assinaturaId);
      if (!assinatura || assinatura.aplicativoAssinanteId !== aplicativoId) throw notFound('subscription');
      const { itens, total } = await repo.listar({ assinatura_id: assinaturaId }, query);
      return page(itens.map(dtoDaReproducao), query, total);
    },

    /**
     * A replay of the subscription's events received in [desde, ate]. Another application's
     * subscription is not found to an application; a switched-off or deleted one is 409 (nobody
     * would receive it); a range holding more than maximoDeEventos stored events is 422.
     */
    async solicitar(assinaturaId: string, corpo: ReproducaoCriar, quem: Solicitante): Promise<ReproducaoDto> {
      const assinatura = await repo.assinatura(assinaturaId);
      if (!assinatura || ('aplicativoId' in quem && assinatura.aplicativoAssinanteId !== quem.aplicativoId))
        throw notFound('subscription');
      if (!assinatura.ativa || assinatura.excluidaEm)
        throw conflict(
          'assinatura_inativa',
          'the subscription is switched off or deleted: nobody would receive a replay',
        );
      const alcance = {
        tipoDeEventoId: assinatura.tipoDeEventoId,
        versaoDoEsquema: assinatura.versaoDoEsquema,
        desde: new Date(corpo.desde),
        ate: new Date(corpo.ate),
      };
      const quantidade = await repo.contarEventos(alcance, deps.maximoDeEventos);
      if (quantidade > deps.maximoDeEventos) {
        const mensagem = `the range holds more than ${deps.maximoDeEventos} stored events (REPLAY_MAX_EVENTS); ask for a shorter range, or several`;
        throw unprocessable('reproducao_grande_demais', mensagem, [{ caminho: '', mensagem }]);
      }
      const agora = relogio();
      const criada = await repo.criar({
        id: uuidv7(agora.getTime()),
        assinaturaId,
        desde: alcance.desde,
        ate: alcance.ate,
        incluirEntregues: corpo.incluir_entregues ?? false,
        situacao: 'pendente',
        quantidadeDeEventos: quantidade,
        solicitadaPor: 'email' in quem ? quem.email : quem.clientId,
        criadaEm: agora,
        atualizadaEm: agora,
      });
      deps.acordar();
      return dtoDaReproducao(criada);
    },

    /** Stops a replay at its next batch (what was delivered stays delivered); a final one is 409. */
    async cancelar(id: string): Promise<ReproducaoDto> {
      const { count } = await repo.cancelar(id, relogio());
      const reproducao = await buscar(id);
      if (count === 1) return reproducao;
      throw conflict(
        'reproducao_encerrada',
        `the replay is ${reproducao.situacao}: only a pendente or em_andamento replay can be cancelled`,
      );
    },
  };
}
export type ReproducaoService = ReturnType<typeof reproducaoService>;

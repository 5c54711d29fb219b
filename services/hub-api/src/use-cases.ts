import type { HubApiAppDeps } from './app';
import { aplicativosRepository } from './features/aplicativos/aplicativos.repository';
import { assinaturasRepository } from './features/assinaturas/assinaturas.repository';
import { destinosRepository } from './features/destinos/destinos.repository';
import { despachanteDeTrabalhos } from './features/publicacao/despacho';
import { gravadorEmGrupo } from './features/publicacao/gravacao-em-grupo';
import { publicacaoRepository } from './features/publicacao/publicacao.repository';
import { publicacaoService } from './features/publicacao/publicacao.service';
import { registradorDeRecusas } from './features/publicacao/recusas';
import { tiposRepository } from './features/tipos-de-evento/tipos-de-evento.repository';
import { versoesRepository } from './features/versoes-de-esquema/versoes-de-esquema.repository';
import { criarMetricas } from './metricas';
import { registroEmCache } from './registro-em-cache';
import { ValidadorDeEsquemas } from './validation/esquemas';

/** Repositories and the publication use case, built once per process (the app and the consumers share them). */
export function createUseCases(
  deps: Pick<
    HubApiAppDeps,
    | 'db'
    | 'sql'
    | 'logger'
    | 'esquemas'
    | 'limiteDaCompilacaoMs'
    | 'cacheTtlMs'
    | 'metricas'
    | 'broker'
    | 'rotearTrabalho'
  >,
) {
  const metricas = deps.metricas ?? criarMetricas();
  const repositorios = {
    aplicativos: aplicativosRepository(deps.db),
    tipos: tiposRepository(deps.db),
    versoes: versoesRepository(deps.db),
    assinaturas: assinaturasRepository(deps.db),
    destinos: destinosRepository(deps.db),
    publicacao: publicacaoRepository(deps.db, deps.sql),
  };
  /** Publication's lookups, cached; `registro.esquecer` is the one way they are dropped (registro-em-cache.ts). */
  const registro = registroEmCache(repositorios, deps.cacheTtlMs);
  const validador = deps.esquemas ?? new ValidadorDeEsquemas({ limiteMs: deps.limiteDaCompilacaoMs ?? 10_000 });
  // Publication's delivery jobs go to RabbitMQ once committed; the outbox takes what it does not confirm.
  const despachante = despachanteDeTrabalhos({
    broker: deps.broker,
    sql: deps.sql,
    logger: deps.logger,
    ...(deps.rotearTrabalho ? { rotear: deps.rotearTrabalho } : {}),
  });
  const publicacao = publicacaoService({
    db: deps.db,
    repo: repositorios.publicacao,
    tipos: registro.tipos,
    versoes: registro.versoes,
    assinaturas: registro.assinaturas,
    validador,
    gravador: gravadorEmGrupo(repositorios.publicacao, despachante.enviar, {
      aoEsvaziar: (itens) => metricas.itensPorEscrita.observe({ escrita: 'publicacao' }, itens),
    }),
    aoAceitar: () => metricas.aceitos.inc(),
  });
  const registrarRecusa = registradorDeRecusas(deps.db, repositorios.publicacao, deps.logger, (codigo) =>
    metricas.recusados.inc({ codigo }),
  );
  return { ...repositorios, validador, publicacao, despachante, registrarRecusa, registro, metricas };
}
export type HubApiCasos = ReturnType<typeof createUseCases>;

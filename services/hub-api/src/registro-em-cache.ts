import { CacheDeLeitura, esquecendoApos } from './cache';
import type { AplicativosRepository } from './features/aplicativos/aplicativos.repository';
import type { PublicacaoRepository } from './features/publicacao/publicacao.repository';
import type { TiposRepository } from './features/tipos-de-evento/tipos-de-evento.repository';
import type { VersoesRepository } from './features/versoes-de-esquema/versoes-de-esquema.repository';

type Valor<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;

export interface FontesDoRegistro {
  aplicativos: Pick<AplicativosRepository, 'buscarPorClientId'>;
  tipos: Pick<TiposRepository, 'buscar'>;
  versoes: Pick<VersoesRepository, 'buscarPorNumero'>;
  publicacao: Pick<PublicacaoRepository, 'assinaturasAtivas'>;
}

/**
 * The registry's lookups of every publication (the application by client id, the type, the version,
 * the active subscriptions of a type and version), each read through a cache (cache.ts), and the ONE
 * way they are dropped: `esquecer`, which drops them all (writes are rare; the cached types and
 * subscriptions carry their applications' names too, so no key is safe to keep). It is called
 * - after each registry write of this process settles (`aposEscrever`, wrapped around the services in
 *   app.ts), so this process reads its own writes at once;
 * - on every `registro_alterado` notification and on a reconnection of the LISTEN connection
 *   (start.ts): writes of other replicas and of the delivery worker, and what was missed meanwhile.
 */
export function registroEmCache(fontes: FontesDoRegistro, vidaMs = 5_000) {
  const aplicativos = new CacheDeLeitura<Valor<AplicativosRepository['buscarPorClientId']>>(vidaMs);
  const tipos = new CacheDeLeitura<Valor<TiposRepository['buscar']>>(vidaMs);
  const versoes = new CacheDeLeitura<Valor<VersoesRepository['buscarPorNumero']>>(vidaMs);
  const assinaturas = new CacheDeLeitura<Valor<PublicacaoRepository['assinaturasAtivas']>>(vidaMs);
  const esquecer = () => {
    for (const cache of [aplicativos, tipos, versoes, assinaturas]) cache.esquecer();
  };
  return {
    aplicativos: {
      buscarPorClientId: (clientId: string) =>
        aplicativos.obter(clientId, () => fontes.aplicativos.buscarPorClientId(clientId)),
    },
    tipos: { buscar: (id: string) => tipos.obter(id, () => fontes.tipos.buscar(id)) },
    versoes: {
      buscarPorNumero: (tipoId: string, versao: number) =>
        versoes.obter(`${tipoId}:${versao}`, () => fontes.versoes.buscarPorNumero(tipoId, versao)),
    },
    assinaturas: {
      assinaturasAtivas: (tipoId: string, versao: number) =>
        assinaturas.obter(`${tipoId}:${versao}`, () => fontes.publicacao.assinaturasAtivas(tipoId, versao)),
    },
    esquecer,
    /** The service with `esquecer` called after each of its `escritas` settles (committed or failed). */
    aposEscrever: <S extends object, K extends keyof S>(servico: S, escritas: K[]): S =>
      esquecendoApos(servico, escritas, esquecer),
  };
}
export type RegistroEmCache = ReturnType<typeof registroEmCache>;

import { useEffect, useState } from 'preact/hooks';
import { type CaminhoDePagina, type ItemDe, lerPagina } from './api';

export interface Opcao {
  valor: string;
  rotulo: string;
}

/**
 * Choices for a select from a page or autocomplete route (the first 100), typed by the route. Empty
 * while loading or refused, and with no route (a select that waits for another one).
 */
export function useOpcoes<P extends CaminhoDePagina>(
  caminho: P | undefined,
  rotulo: (item: ItemDe<P>) => string,
  mais: { valor?: (item: ItemDe<P>) => string; query?: Record<string, string> } = {},
): Opcao[] {
  const [opcoes, setOpcoes] = useState<Opcao[]>([]);
  const chave = `${caminho}|${JSON.stringify(mais.query ?? {})}`;
  useEffect(() => {
    if (!caminho) {
      setOpcoes([]);
      return;
    }
    let vivo = true;
    lerPagina(caminho, { ...mais.query, tamanho: 100 })
      .then((p) => {
        if (vivo)
          setOpcoes(
            p.itens.map((item) => ({
              valor: mais.valor ? mais.valor(item) : (item as { id: string }).id,
              rotulo: rotulo(item),
            })),
          );
      })
      .catch(() => vivo && setOpcoes([]));
    return () => {
      vivo = false;
    };
  }, [chave]);
  return opcoes;
}

export const useTipos = () => useOpcoes('/tipo-de-evento/autocomplete', (t) => t.nome);
export const useAplicativos = () => useOpcoes('/aplicativo', (a) => `${a.nome} (${a.client_id})`);

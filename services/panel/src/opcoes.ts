import { useEffect, useState } from 'preact/hooks';
import { api, type Pagina } from './api';

export interface Opcao {
  valor: string;
  rotulo: string;
}

/** Choices for a select from a page or autocomplete route (the first 100). Empty while loading or refused. */
export function useOpcoes<T>(
  caminho: string | undefined,
  rotulo: (item: T) => string,
  valor?: (item: T) => string,
): Opcao[] {
  const [opcoes, setOpcoes] = useState<Opcao[]>([]);
  useEffect(() => {
    if (!caminho) {
      setOpcoes([]);
      return;
    }
    let vivo = true;
    const separador = caminho.includes('?') ? '&' : '?';
    api<Pagina<T>>('GET', `${caminho}${separador}tamanho=100`)
      .then((p) => {
        if (vivo)
          setOpcoes(
            p.itens.map((item) => ({
              valor: valor ? valor(item) : (item as { id: string }).id,
              rotulo: rotulo(item),
            })),
          );
      })
      .catch(() => vivo && setOpcoes([]));
    return () => {
      vivo = false;
    };
  }, [caminho]);
  return opcoes;
}

export const useTipos = () => useOpcoes<{ id: string; nome: string }>('/tipo-de-evento/autocomplete', (t) => t.nome);
export const useAplicativos = () =>
  useOpcoes<{ id: string; nome: string; client_id: string }>('/aplicativo', (a) => `${a.nome} (${a.client_id})`);

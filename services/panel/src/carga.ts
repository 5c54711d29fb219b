import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ErroDaApi } from './api';

export interface Carga<T> {
  dados: T | undefined;
  erro: ErroDaApi | undefined;
  carregando: boolean;
  recarregar: () => void;
}

/** Loads on mount and whenever `chave` changes; `intervaloMs` refreshes it in the background. */
export function useCarga<T>(carregar: () => Promise<T>, chave: string, intervaloMs?: number): Carga<T> {
  const [dados, setDados] = useState<T>();
  const [erro, setErro] = useState<ErroDaApi>();
  const [carregando, setCarregando] = useState(true);
  const [versao, setVersao] = useState(0);
  const atual = useRef(carregar);
  atual.current = carregar;

  useEffect(() => {
    let vivo = true;
    const buscar = (primeira: boolean) => {
      if (primeira) setCarregando(true);
      atual
        .current()
        .then((valor) => {
          if (!vivo) return;
          setDados(valor);
          setErro(undefined);
        })
        .catch((e: unknown) => {
          if (!vivo) return;
          setErro(
            e instanceof ErroDaApi ? e : new ErroDaApi({ status: 0, codigo: 'erro', detail: String(e) }, 'GET', ''),
          );
        })
        .finally(() => vivo && setCarregando(false));
    };
    buscar(true);
    const timer = intervaloMs ? setInterval(() => buscar(false), intervaloMs) : undefined;
    return () => {
      vivo = false;
      if (timer) clearInterval(timer);
    };
  }, [chave, versao, intervaloMs]);

  const recarregar = useCallback(() => setVersao((v) => v + 1), []);
  return { dados, erro, carregando, recarregar };
}

import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** A small history router under /painel/: the gateway answers index.html for every deep link. */
export const BASE = '/painel';
const MUDOU = 'painel:rota';

export const rotaAtual = () => {
  const caminho = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return caminho === '' ? '/' : caminho;
};

export function navegar(para: string, substituir = false) {
  if (substituir) history.replaceState(null, '', BASE + para);
  else history.pushState(null, '', BASE + para);
  dispatchEvent(new Event(MUDOU));
}

export function useRota(): { caminho: string; busca: URLSearchParams } {
  const [estado, setEstado] = useState(() => ({ caminho: rotaAtual(), busca: new URLSearchParams(location.search) }));
  useEffect(() => {
    const atualizar = () => setEstado({ caminho: rotaAtual(), busca: new URLSearchParams(location.search) });
    addEventListener('popstate', atualizar);
    addEventListener(MUDOU, atualizar);
    return () => {
      removeEventListener('popstate', atualizar);
      removeEventListener(MUDOU, atualizar);
    };
  }, []);
  return estado;
}

/** `/eventos/:id` against `/eventos/123` → `{ id: '123' }`, or undefined. */
export function casar(padrao: string, caminho: string): Record<string, string> | undefined {
  const sem = (c: string) => (c.length > 1 ? c.replace(/\/$/, '') : c);
  const a = sem(padrao).split('/');
  const b = sem(caminho).split('/');
  if (a.length !== b.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, parte] of a.entries()) {
    const valor = b[i] ?? '';
    if (parte.startsWith(':')) params[parte.slice(1)] = decodeURIComponent(valor);
    else if (parte !== valor) return undefined;
  }
  return params;
}

export function Link(props: {
  para: string;
  children: JSX.Element | string | (JSX.Element | string)[];
  class?: string;
  'aria-current'?: 'page';
}) {
  return (
    <a
      href={BASE + props.para}
      class={props.class}
      aria-current={props['aria-current']}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navegar(props.para);
      }}
    >
      {props.children}
    </a>
  );
}

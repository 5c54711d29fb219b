import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type ErroDaApi, ErroDaApi as Erro } from './api';
import type { Carga } from './carga';

export const data = (iso: string | null | undefined) =>
  iso ? new Date(iso).toLocaleString('pt-BR', { dateStyle: 'short', timeStyle: 'medium' }) : '—';
export const simNao = (valor: boolean) => (valor ? 'sim' : 'não');

export function Titulo(props: { children: ComponentChildren; acoes?: ComponentChildren }) {
  return (
    <div class="titulo">
      <h1>{props.children}</h1>
      {props.acoes && <div class="acoes">{props.acoes}</div>}
    </div>
  );
}

export const Carregando = (props: { texto?: string }) => (
  <p class="estado" role="status" aria-live="polite">
    {props.texto ?? 'Carregando…'}
  </p>
);
export const Vazio = (props: { texto: string }) => <p class="estado vazio">{props.texto}</p>;
export const Aviso = (props: { erro: ErroDaApi | string }) => (
  <p class="estado erro" role="alert">
    {typeof props.erro === 'string' ? props.erro : props.erro.texto}
  </p>
);

/** Loading, error, empty, or the content: every screen shows one of the four. */
export function Estado<T>(props: {
  carga: Carga<T>;
  vazio?: (dados: T) => boolean;
  textoVazio?: string;
  children: (dados: T) => ComponentChildren;
}) {
  const { dados, erro, carregando } = props.carga;
  if (erro && dados === undefined) return <Aviso erro={erro} />;
  if (dados === undefined) return carregando ? <Carregando /> : null;
  return (
    <>
      {erro && <Aviso erro={erro} />}
      {props.vazio?.(dados) ? <Vazio texto={props.textoVazio ?? 'Nada por aqui ainda.'} /> : props.children(dados)}
    </>
  );
}

export interface Coluna<T> {
  rotulo: string;
  valor: (item: T) => ComponentChildren;
}

export function Tabela<T extends object>(props: {
  legenda: string;
  colunas: Coluna<T>[];
  itens: T[];
  chave?: (item: T) => string;
}) {
  return (
    // A wide table scrolls sideways; the keyboard must reach that scroll too (axe scrollable-region-focusable).
    // biome-ignore lint/a11y/noNoninteractiveTabindex: see above
    <section class="rolagem" aria-label={props.legenda} tabIndex={0}>
      <table>
        <caption class="invisivel">{props.legenda}</caption>
        <thead>
          <tr>
            {props.colunas.map((c) => (
              <th scope="col" key={c.rotulo}>
                {c.rotulo}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.itens.map((item, i) => (
            <tr key={props.chave?.(item) ?? (item as { id?: string }).id ?? i}>
              {props.colunas.map((c) => (
                <td key={c.rotulo}>{c.valor(item)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function Paginacao(props: { pagina: number; tamanho: number; total: number; ir: (pagina: number) => void }) {
  const paginas = Math.max(1, Math.ceil(props.total / props.tamanho));
  return (
    <nav class="paginacao" aria-label="Paginação">
      <button type="button" disabled={props.pagina <= 1} onClick={() => props.ir(props.pagina - 1)}>
        Anterior
      </button>
      <span>
        Página {props.pagina} de {paginas} · {props.total.toLocaleString('pt-BR')} no total
      </span>
      <button type="button" disabled={props.pagina >= paginas} onClick={() => props.ir(props.pagina + 1)}>
        Próxima
      </button>
    </nav>
  );
}

export const Json = (props: { valor: unknown; rotulo: string }) => (
  // biome-ignore lint/a11y/noNoninteractiveTabindex: a long JSON scrolls; the keyboard must reach it
  <pre class="json" title={props.rotulo} tabIndex={0}>
    {JSON.stringify(props.valor, null, 2)}
  </pre>
);

/**
 * A button that calls the API, then `depois`; a refusal is shown beside it. With `confirmar`, the
 * first press only asks (that text, Confirmar, Cancelar) and the call waits for Confirmar.
 */
export function Acao(props: {
  rotulo: string;
  fazer: () => Promise<unknown>;
  depois?: (r: unknown) => void;
  perigo?: boolean;
  rotuloAcessivel?: string;
  confirmar?: string;
}) {
  const [erro, setErro] = useState<string>();
  const [ocupado, setOcupado] = useState(false);
  const [perguntando, setPerguntando] = useState(false);
  const confirmacao = useRef<HTMLButtonElement>(null);
  // In the same commit as the question appears (not after paint): the focus is on Confirmar as soon as it shows.
  useLayoutEffect(() => {
    if (perguntando) confirmacao.current?.focus();
  }, [perguntando]);
  const executar = async () => {
    setPerguntando(false);
    setErro(undefined);
    setOcupado(true);
    try {
      // Not `depois?.(await fazer())`: an optional call skips its arguments when depois is absent.
      const resultado = await props.fazer();
      props.depois?.(resultado);
    } catch (error) {
      setErro(error instanceof Erro ? error.texto : String(error));
    } finally {
      setOcupado(false);
    }
  };
  return (
    <span class="acao">
      {perguntando ? (
        // biome-ignore lint/a11y/useSemanticElements: a fieldset (block) cannot sit in the inline span.acao, which table cells hold
        <span role="group" aria-label={`Confirmar: ${props.rotulo}`}>
          <span>{props.confirmar}</span>{' '}
          <button type="button" class="perigo" ref={confirmacao} onClick={executar}>
            Confirmar
          </button>{' '}
          <button type="button" onClick={() => setPerguntando(false)}>
            Cancelar
          </button>
        </span>
      ) : (
        <button
          type="button"
          class={props.perigo ? 'perigo' : undefined}
          disabled={ocupado}
          aria-label={props.rotuloAcessivel}
          onClick={props.confirmar ? () => setPerguntando(true) : executar}
        >
          {props.rotulo}
        </button>
      )}
      {erro && (
        <span class="erro" role="alert">
          {erro}
        </span>
      )}
    </span>
  );
}

/**
 * The active switch of a registry row (an application, a type, a version, a subscription, an
 * access): Desativar or Ativar, named after the row for assistive technology, then `depois`.
 */
export function AlternarAtivo(props: {
  ativo: boolean;
  /** The row, as the accessible name says it: "Desativar {nome}". */
  nome: string;
  alternar: (ativo: boolean) => Promise<unknown>;
  depois: () => void;
}) {
  const rotulo = props.ativo ? 'Desativar' : 'Ativar';
  return (
    <Acao
      rotulo={rotulo}
      rotuloAcessivel={`${rotulo} ${props.nome}`}
      fazer={() => props.alternar(!props.ativo)}
      depois={props.depois}
    />
  );
}

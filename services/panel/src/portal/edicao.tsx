import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ErroDaApi } from '../api';
import { ErrosDeValidacao } from '../formulario';

/**
 * A text of a subscription row that its application edits in place (its URL, its filter as JSON):
 * Editar opens a field with Salvar and Cancelar; a refusal is shown under it and the field stays.
 */
export function EditarNaLinha(props: {
  /** What is edited, for assistive technology: "URL da assinatura de pedido.criado v1". */
  rotulo: string;
  valor: string;
  mostrar: (valor: string) => ComponentChildren;
  salvar: (texto: string) => Promise<unknown>;
  depois: () => void;
  multilinha?: boolean;
}) {
  const [editando, setEditando] = useState(false);
  const [texto, setTexto] = useState(props.valor);
  const [erro, setErro] = useState<ErroDaApi | string>();
  if (!editando)
    return (
      <span class="linha-de-edicao">
        {props.mostrar(props.valor)}
        <button
          type="button"
          aria-label={`Editar ${props.rotulo}`}
          onClick={() => {
            setTexto(props.valor);
            setErro(undefined);
            setEditando(true);
          }}
        >
          Editar
        </button>
      </span>
    );
  const salvar = async (e: Event) => {
    e.preventDefault();
    try {
      await props.salvar(texto);
      setEditando(false);
      props.depois();
    } catch (error) {
      setErro(error instanceof ErroDaApi ? error : String(error));
    }
  };
  const Campo = props.multilinha ? 'textarea' : 'input';
  return (
    <form class="linha-de-edicao" onSubmit={salvar} aria-label={`Editar ${props.rotulo}`}>
      <Campo
        aria-label={props.rotulo}
        value={texto}
        spellcheck={false}
        onInput={(e: Event) => setTexto((e.currentTarget as HTMLInputElement).value)}
      />
      <button type="submit">Salvar</button>
      <button type="button" onClick={() => setEditando(false)}>
        Cancelar
      </button>
      {erro && (
        <span class="erro" role="alert">
          {typeof erro === 'string' ? erro : erro.texto}
          {typeof erro !== 'string' && erro.problema.erros && <ErrosDeValidacao erros={erro.problema.erros} />}
        </span>
      )}
    </form>
  );
}

/** A filter typed as JSON: empty is no filter (null); anything else must parse. */
export function filtroDoTexto(texto: string): Record<string, unknown> | null {
  if (texto.trim() === '') return null;
  try {
    return JSON.parse(texto) as Record<string, unknown>;
  } catch (error) {
    throw `JSON inválido: ${(error as Error).message}`;
  }
}

import { useState } from 'preact/hooks';
import { ErroDaApi } from '../api';

/**
 * A word of a row (a type's compatibilidade, a subscription's formato) that an editor changes in
 * place: a select that sends the PATCH on change; a refusal shows beside it and the select goes back.
 */
export function EscolherNaLinha(props: {
  /** The accessible name: "compatibilidade de pedido.criado". */
  rotulo: string;
  valor: string;
  opcoes: readonly string[];
  /** Whether the caller may change it; otherwise the word is shown as text. */
  editavel: boolean;
  mudar: (valor: string) => Promise<unknown>;
  depois: () => void;
}) {
  const [erro, setErro] = useState<string>();
  const [ocupado, setOcupado] = useState(false);
  if (!props.editavel) return <>{props.valor}</>;
  const mudar = async (valor: string) => {
    setErro(undefined);
    setOcupado(true);
    try {
      await props.mudar(valor);
      props.depois();
    } catch (error) {
      setErro(error instanceof ErroDaApi ? error.texto : String(error));
    } finally {
      setOcupado(false);
    }
  };
  return (
    <span class="acao">
      <select
        aria-label={props.rotulo}
        value={props.valor}
        disabled={ocupado}
        onChange={(e) => mudar((e.target as HTMLSelectElement).value)}
      >
        {props.opcoes.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
      {erro && (
        <span class="erro" role="alert">
          {erro}
        </span>
      )}
    </span>
  );
}

import { useState } from 'preact/hooks';
import { comoErroDaApi, ErroDaApi } from '../api';
import { ErrosDeValidacao } from '../formulario';

/** The route of the replay, typed once it is in the platform's document: a loose call until then. */
type Solto = {
  POST(
    caminho: string,
    init: { params: { path: { id: string } }; body: Record<string, unknown> },
  ): Promise<{ data?: unknown }>;
};

/**
 * A replay of the subscription's past events (POST /assinaturas/{id}/reproduzir { desde, ate,
 * incluir_entregues }): the events received in [desde, ate] that its filter matches are delivered again.
 */
export function Reproduzir(props: { cliente: unknown; assinaturaId: string; nome: string }) {
  const [aberto, setAberto] = useState(false);
  const [resultado, setResultado] = useState<string | ErroDaApi>();
  const base = `reproduzir-${props.assinaturaId}`;
  if (!aberto)
    return (
      <button type="button" aria-label={`Reproduzir eventos de ${props.nome}`} onClick={() => setAberto(true)}>
        Reproduzir
      </button>
    );
  const enviar = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const quando = (nome: string) => new Date(String(form.get(nome))).toISOString();
    try {
      const body = { desde: quando('desde'), ate: quando('ate'), incluir_entregues: form.get('incluir') === 'on' };
      await (props.cliente as Solto).POST('/assinaturas/{id}/reproduzir', {
        params: { path: { id: props.assinaturaId } },
        body,
      });
      setResultado('Reprodução pedida: as entregas aparecem na aba Entregas.');
    } catch (error) {
      const erro = comoErroDaApi(error);
      setResultado(erro instanceof ErroDaApi ? erro : String(erro));
    }
  };
  return (
    <form class="linha-de-edicao" onSubmit={enviar} aria-label={`Reproduzir eventos de ${props.nome}`}>
      <label for={`${base}-desde`}>desde</label>
      <input id={`${base}-desde`} name="desde" type="datetime-local" required />
      <label for={`${base}-ate`}>até</label>
      <input id={`${base}-ate`} name="ate" type="datetime-local" required />
      <label>
        <input name="incluir" type="checkbox" /> incluir as já entregues
      </label>
      <button type="submit">Pedir reprodução</button>
      <button type="button" onClick={() => setAberto(false)}>
        Fechar
      </button>
      {resultado && (
        <span class={typeof resultado === 'string' ? 'estado ok' : 'erro'} role="status">
          {typeof resultado === 'string' ? resultado : resultado.texto}
          {typeof resultado !== 'string' && resultado.problema.erros && (
            <ErrosDeValidacao erros={resultado.problema.erros} />
          )}
        </span>
      )}
    </form>
  );
}

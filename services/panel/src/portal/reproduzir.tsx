import { useEffect, useState } from 'preact/hooks';
import { comoErroDaApi, ErroDaApi } from '../api';
import { ErrosDeValidacao } from '../formulario';

/** The routes of the replay, typed once they are in the platform's document: loose calls until then. */
type Solto = {
  POST(
    caminho: string,
    init: { params: { path: { id: string } }; body: Record<string, unknown> },
  ): Promise<{ data?: unknown }>;
  GET(
    caminho: string,
    init: { params: { path: { id: string }; query: Record<string, unknown> } },
  ): Promise<{ data?: unknown }>;
};

/** What the portal shows of a replay (GET /assinaturas/{id}/reproducoes). */
interface Reproducao {
  id: string;
  situacao: 'pendente' | 'em_andamento' | 'concluida' | 'cancelada';
  quantidade_de_eventos: number;
  criadas: number;
  reenviadas: number;
  ignoradas: number;
}

const ENCERRADA = new Set(['concluida', 'cancelada']);
const progressoDe = (r: Reproducao) =>
  `Reprodução ${r.situacao.replace('_', ' ')}: ${r.criadas} criadas, ${r.reenviadas} reenviadas, ` +
  `${r.ignoradas} ignoradas, de ${r.quantidade_de_eventos} eventos.`;

/** A replay's progress, read again every 2 s until it ends. */
function Progresso(props: { cliente: unknown; assinaturaId: string; reproducao: Reproducao }) {
  const [atual, setAtual] = useState(props.reproducao);
  useEffect(() => {
    if (ENCERRADA.has(atual.situacao)) return;
    const vez = setTimeout(async () => {
      try {
        const { data } = await (props.cliente as Solto).GET('/assinaturas/{id}/reproducoes', {
          params: { path: { id: props.assinaturaId }, query: { tamanho: 20 } },
        });
        const achada = (data as { itens: Reproducao[] } | undefined)?.itens.find((r) => r.id === atual.id);
        setAtual(achada ? { ...achada } : { ...atual });
      } catch {
        setAtual({ ...atual });
      }
    }, 2_000);
    return () => clearTimeout(vez);
  }, [atual, props.assinaturaId, props.cliente]);
  return (
    <span class="estado ok" role="status">
      {progressoDe(atual)} As entregas aparecem na aba Entregas.
    </span>
  );
}

/**
 * A replay of the subscription's past events (POST /assinaturas/{id}/reproduzir { desde, ate,
 * incluir_entregues }): the events received in [desde, ate] that its filter matches are delivered again.
 */
export function Reproduzir(props: { cliente: unknown; assinaturaId: string; nome: string }) {
  const [aberto, setAberto] = useState(false);
  const [resultado, setResultado] = useState<Reproducao | ErroDaApi | string>();
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
      const { data } = await (props.cliente as Solto).POST('/assinaturas/{id}/reproduzir', {
        params: { path: { id: props.assinaturaId } },
        body,
      });
      setResultado(data as Reproducao);
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
      {resultado instanceof ErroDaApi && (
        <span class="erro" role="status">
          {resultado.texto}
          {resultado.problema.erros && <ErrosDeValidacao erros={resultado.problema.erros} />}
        </span>
      )}
      {typeof resultado === 'string' && (
        <span class="erro" role="status">
          {resultado}
        </span>
      )}
      {typeof resultado === 'object' && !(resultado instanceof ErroDaApi) && (
        <Progresso cliente={props.cliente} assinaturaId={props.assinaturaId} reproducao={resultado} />
      )}
    </form>
  );
}

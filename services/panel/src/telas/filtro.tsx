import { useState } from 'preact/hooks';
import { type Corpo, cliente, dados, ErroDaApi, type ErroDeCampo, type Resposta } from '../api';
import { ErrosDeValidacao } from '../formulario';

type Teste = Resposta<'/assinatura/testar-filtro', 'post'>;
export type Pedido = Corpo<'/assinatura/testar-filtro', 'post'>;
type Resultado = Teste | { texto: string; erros: ErroDeCampo[] };

/** The text of a JSON field (`caminho` its pointer in the body): empty is `vazio`; invalid JSON, an error at it. */
function lerJson(texto: string, caminho: string, vazio: unknown): { valor: unknown } | { erro: ErroDeCampo } {
  if (texto.trim() === '') return { valor: vazio };
  try {
    return { valor: JSON.parse(texto) };
  } catch (error) {
    return { erro: { caminho, mensagem: `JSON inválido: ${(error as Error).message}` } };
  }
}

/**
 * The playground of POST /assinatura/testar-filtro, beside the subscription form: the filter being
 * typed there (`filtro`, its text; empty is no filter) against dados and an entidade_id typed here.
 * `testar` sends the test (the subscribers' portal: POST /assinaturas/testar-filtro).
 */
export function TestarFiltro(props: { filtro: string; testar?: (body: Pedido) => Promise<Teste> }) {
  const [texto, setTexto] = useState('{}');
  const [entidade, setEntidade] = useState('');
  const [resultado, setResultado] = useState<Resultado>();
  const testar = async (e: Event) => {
    e.preventDefault();
    const filtro = lerJson(props.filtro, '/filtro', null);
    const valor = lerJson(texto, '/dados', undefined);
    const erros = [filtro, valor].flatMap((x) => ('erro' in x ? [x.erro] : []));
    if (erros.length || !('valor' in filtro) || !('valor' in valor)) {
      setResultado({ texto: 'Corrija o JSON:', erros });
      return;
    }
    try {
      // Parsed JSON as typed: the API checks the filter (422 filtro_invalido at its caminho).
      const body: Pedido = {
        filtro: filtro.valor as Pedido['filtro'],
        dados: valor.valor as Pedido['dados'],
        ...(entidade.trim() ? { entidade_id: entidade.trim() } : {}),
      };
      setResultado(
        await (props.testar ? props.testar(body) : dados(cliente.POST('/assinatura/testar-filtro', { body }))),
      );
    } catch (error) {
      if (!(error instanceof ErroDaApi)) throw error;
      setResultado({ texto: error.texto, erros: error.problema.erros ?? [] });
    }
  };
  return (
    <section aria-label="Testar o filtro">
      <h2>Testar o filtro</h2>
      <p class="nota">
        O filtro do formulário acima contra estes dados (o corpo testado é {'{ entidade_id, dados }'}).
      </p>
      <form class="formulario" onSubmit={testar} aria-label="Testar o filtro contra estes dados">
        <div class="campos">
          <div class="campo">
            <label for="testar-filtro-dados">dados de exemplo (JSON)</label>
            <textarea
              id="testar-filtro-dados"
              rows={6}
              spellcheck={false}
              value={texto}
              onInput={(e) => setTexto(e.currentTarget.value)}
            />
          </div>
          <div class="campo">
            <label for="testar-filtro-entidade">entidade_id de exemplo</label>
            <input
              id="testar-filtro-entidade"
              type="text"
              value={entidade}
              onInput={(e) => setEntidade(e.currentTarget.value)}
            />
          </div>
        </div>
        <button type="submit">Testar contra estes dados</button>
      </form>
      {resultado && 'corresponde' in resultado && (
        <p class={`estado ${resultado.corresponde ? 'ok' : 'vazio'}`} role="status">
          {resultado.corresponde
            ? 'Corresponde: a assinatura receberia este evento.'
            : 'Não corresponde: a assinatura não receberia este evento.'}
        </p>
      )}
      {resultado && 'texto' in resultado && (
        <div role="alert">
          <p class="estado erro">{resultado.texto}</p>
          <ErrosDeValidacao erros={resultado.erros} />
        </div>
      )}
    </section>
  );
}

/** A stored filter in a list: "—" for none, else its JSON cut short, whole in the title. */
export function ResumoDoFiltro(props: { filtro: Record<string, unknown> | null }) {
  if (props.filtro === null) return <span title="sem filtro: todos os eventos">—</span>;
  const json = JSON.stringify(props.filtro);
  return <code title={json}>{json.length > 40 ? `${json.slice(0, 39)}…` : json}</code>;
}

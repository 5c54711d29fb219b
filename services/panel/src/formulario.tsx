import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { type ErroDeCampo, ErroDaApi } from './api';
import { Aviso } from './ui';

export interface CampoDef<N extends string = string> {
  nome: N;
  rotulo: string;
  tipo?: 'texto' | 'numero' | 'booleano' | 'json' | 'selecao' | 'data' | 'email';
  opcoes?: { valor: string; rotulo: string }[];
  obrigatorio?: boolean;
  ajuda?: string;
  inicial?: string | boolean;
  aoMudar?: (valor: string) => void;
}

type Valores = Record<string, string | boolean>;

function corpoDe(campos: CampoDef[], valores: Valores): { corpo: Record<string, unknown>; erros: ErroDeCampo[] } {
  const corpo: Record<string, unknown> = {};
  const erros: ErroDeCampo[] = [];
  for (const campo of campos) {
    const valor = valores[campo.nome];
    if (campo.tipo === 'booleano') {
      corpo[campo.nome] = valor === true;
      continue;
    }
    const texto = typeof valor === 'string' ? valor.trim() : '';
    if (texto === '') continue;
    if (campo.tipo === 'numero') corpo[campo.nome] = Number(texto);
    else if (campo.tipo === 'data') corpo[campo.nome] = new Date(texto).toISOString();
    else if (campo.tipo === 'json') {
      try {
        corpo[campo.nome] = JSON.parse(texto);
      } catch (e) {
        erros.push({ caminho: `/${campo.nome}`, mensagem: `JSON inválido: ${(e as Error).message}` });
      }
    } else corpo[campo.nome] = texto;
  }
  return { corpo, erros };
}

/**
 * The validator's errors (a 422's `erros`, POST /versao-de-esquema/{id}/validar, a refused event):
 * each JSON pointer and its message. Under a field, `campo` names the pointer the field already is.
 */
export function ErrosDeValidacao(props: { erros: ErroDeCampo[]; id?: string; campo?: string }) {
  return (
    <ul id={props.id} class="erros-de-validacao">
      {props.erros.map((x) => (
        <li key={x.caminho + x.mensagem}>
          {x.caminho !== props.campo && (
            <>
              <code>{x.caminho || '/'}</code>:{' '}
            </>
          )}
          {x.mensagem}
        </li>
      ))}
    </ul>
  );
}

/** `/dados/cliente/nome` belongs to the field `dados`. */
const campoDoErro = (caminho: string) => caminho.split('/')[1] ?? '';

export function Campo(props: {
  campo: CampoDef;
  valor: string | boolean;
  erros: ErroDeCampo[];
  mudar: (v: string | boolean) => void;
  prefixo: string;
}) {
  const { campo, valor, erros } = props;
  const id = `${props.prefixo}-${campo.nome}`;
  const descricao = [campo.ajuda ? `${id}-ajuda` : '', erros.length ? `${id}-erro` : ''].filter(Boolean).join(' ');
  const comum = {
    id,
    name: campo.nome,
    required: campo.obrigatorio,
    'aria-invalid': erros.length > 0,
    'aria-describedby': descricao || undefined,
  };
  const texto = typeof valor === 'string' ? valor : '';
  const aoDigitar = (e: JSX.TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>) => {
    props.mudar(e.currentTarget.value);
    campo.aoMudar?.(e.currentTarget.value);
  };
  let controle: JSX.Element;
  if (campo.tipo === 'booleano')
    controle = (
      <input
        {...comum}
        type="checkbox"
        checked={valor === true}
        onChange={(e) => props.mudar(e.currentTarget.checked)}
      />
    );
  else if (campo.tipo === 'json')
    controle = <textarea {...comum} rows={8} spellcheck={false} value={texto} onInput={aoDigitar} />;
  else if (campo.tipo === 'selecao')
    controle = (
      <select {...comum} value={texto} onChange={aoDigitar}>
        <option value="">—</option>
        {campo.opcoes?.map((o) => (
          <option key={o.valor} value={o.valor}>
            {o.rotulo}
          </option>
        ))}
      </select>
    );
  else
    controle = (
      <input
        {...comum}
        type={
          campo.tipo === 'numero'
            ? 'number'
            : campo.tipo === 'data'
              ? 'datetime-local'
              : campo.tipo === 'email'
                ? 'email'
                : 'text'
        }
        value={texto}
        onInput={aoDigitar}
      />
    );
  return (
    <div class={`campo ${campo.tipo === 'booleano' ? 'marcador' : ''}`}>
      {/* The asterisk is drawn by CSS: `required` already tells assistive technology. */}
      <label for={id} class={campo.obrigatorio ? 'obrigatorio' : undefined}>
        {campo.rotulo}
      </label>
      {controle}
      {campo.ajuda && (
        <small id={`${id}-ajuda`} class="ajuda">
          {campo.ajuda}
        </small>
      )}
      {erros.length > 0 && <ErrosDeValidacao id={`${id}-erro`} erros={erros} campo={`/${campo.nome}`} />}
    </div>
  );
}

/**
 * A form over `campos` whose values make the body `enviar` takes (`C`, usually a route's `Corpo`;
 * the field names are checked against it); the API's 422 errors land at their fields, the rest
 * above the button.
 */
export function Formulario<C extends object, R>(props: {
  titulo: string;
  campos: CampoDef<NoInfer<keyof C & string>>[];
  enviar: (corpo: C) => Promise<R>;
  aoConcluir?: (resposta: R) => void;
  rotulo?: string;
  filhos?: ComponentChildren;
}) {
  const inicial = (): Valores =>
    Object.fromEntries(props.campos.map((c) => [c.nome, c.inicial ?? (c.tipo === 'booleano' ? false : '')]));
  const [valores, setValores] = useState<Valores>(inicial);
  const [erros, setErros] = useState<ErroDeCampo[]>([]);
  const [geral, setGeral] = useState<string>();
  const [enviando, setEnviando] = useState(false);
  const [feito, setFeito] = useState<string>();
  const prefixo = props.titulo.toLowerCase().replace(/[^a-z0-9]+/g, '-');

  const submeter = async (e: Event) => {
    e.preventDefault();
    setFeito(undefined);
    setGeral(undefined);
    const { corpo, erros: locais } = corpoDe(props.campos, valores);
    setErros(locais);
    if (locais.length) return;
    setEnviando(true);
    try {
      // Each field's kind makes its value's type (a number, parsed JSON, a boolean); the API validates the rest.
      const resposta = await props.enviar(corpo as C);
      setValores(inicial());
      setFeito('Salvo.');
      props.aoConcluir?.(resposta);
    } catch (error) {
      if (!(error instanceof ErroDaApi)) throw error;
      const nomes = new Set<string>(props.campos.map((c) => c.nome));
      const todos = error.problema.erros ?? [];
      setErros(todos.filter((x) => nomes.has(campoDoErro(x.caminho))));
      const soltos = todos.filter((x) => !nomes.has(campoDoErro(x.caminho)));
      setGeral([error.texto, ...soltos.map((x) => `${x.caminho || '/'}: ${x.mensagem}`)].join(' · '));
    } finally {
      setEnviando(false);
    }
  };

  return (
    <form class="formulario" onSubmit={submeter} aria-label={props.titulo} noValidate>
      <h2>{props.titulo}</h2>
      <div class="campos">
        {props.campos.map((campo) => (
          <Campo
            key={campo.nome}
            campo={campo}
            prefixo={prefixo}
            valor={valores[campo.nome] ?? ''}
            erros={erros.filter((x) => campoDoErro(x.caminho) === campo.nome)}
            mudar={(v) => setValores((atual) => ({ ...atual, [campo.nome]: v }))}
          />
        ))}
      </div>
      {props.filhos}
      {geral && <Aviso erro={geral} />}
      {feito && (
        <p class="estado ok" role="status">
          {feito}
        </p>
      )}
      <button type="submit" class="primario" disabled={enviando}>
        {enviando ? 'Enviando…' : (props.rotulo ?? 'Criar')}
      </button>
    </form>
  );
}

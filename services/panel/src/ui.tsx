import type { ComponentChildren, JSX } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { type ErroDaApi, type ErroDeCampo, ErroDaApi as Erro } from './api';
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

export interface CampoDef {
  nome: string;
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
      {erros.length > 0 && (
        <ul id={`${id}-erro`} class="erros-do-campo">
          {erros.map((e) => (
            <li key={e.caminho + e.mensagem}>
              {e.caminho !== `/${campo.nome}` ? `${e.caminho}: ` : ''}
              {e.mensagem}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A form over `campos`; the API's 422 errors land at their fields, the rest above the button. */
export function Formulario(props: {
  titulo: string;
  campos: CampoDef[];
  enviar: (corpo: Record<string, unknown>) => Promise<unknown>;
  aoConcluir?: (resposta: unknown) => void;
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
      const resposta = await props.enviar(corpo);
      setValores(inicial());
      setFeito('Salvo.');
      props.aoConcluir?.(resposta);
    } catch (error) {
      if (!(error instanceof Erro)) throw error;
      const nomes = new Set(props.campos.map((c) => c.nome));
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

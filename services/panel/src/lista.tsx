import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { type CaminhoDeFiltro, type CaminhoDePagina, type ItemDe, lerFiltro, lerPagina, type Pagina } from './api';
import { useCarga } from './carga';
import { Campo, type CampoDef } from './formulario';
import { type Coluna, Estado, Paginacao, Tabela } from './ui';

export type Filtros = Record<string, string>;

/** A list's `versao` and the function that bumps it: a screen reloads its Lista after a change. */
export const useVersao = () => {
  const [versao, setVersao] = useState(0);
  return [versao, () => setVersao((v) => v + 1)] as const;
};

const valorDoFiltro = (campo: CampoDef, valor: string) =>
  campo.tipo === 'data' && valor ? new Date(valor).toISOString() : valor.trim();

/** The filters as a small form: applied on submit, cleared at once. */
export function FormularioDeFiltros(props: {
  campos: CampoDef[];
  aplicar: (f: Filtros) => void;
  rotulo: string;
  iniciais?: Filtros;
}) {
  const [valores, setValores] = useState<Filtros>(props.iniciais ?? {});
  return (
    <form
      class="filtros"
      aria-label={props.rotulo}
      onSubmit={(e) => {
        e.preventDefault();
        const filtros: Filtros = {};
        for (const campo of props.campos) {
          const valor = valorDoFiltro(campo, valores[campo.nome] ?? '');
          if (valor) filtros[campo.nome] = valor;
        }
        props.aplicar(filtros);
      }}
    >
      {props.campos.map((campo) => (
        <Campo
          key={campo.nome}
          campo={campo}
          prefixo="filtro"
          valor={valores[campo.nome] ?? ''}
          erros={[]}
          mudar={(v) => setValores((atual) => ({ ...atual, [campo.nome]: String(v) }))}
        />
      ))}
      <div class="botoes">
        <button type="submit">Filtrar</button>
        <button
          type="reset"
          onClick={() => {
            setValores({});
            props.aplicar({});
          }}
        >
          Limpar
        </button>
      </div>
    </form>
  );
}

/** The /filtro routes whose items the page route's columns can show. */
type FiltroDe<P extends CaminhoDePagina> = {
  [F in CaminhoDeFiltro]: ItemDe<F> extends ItemDe<P> ? F : never;
}[CaminhoDeFiltro];

/**
 * A list as the API pages it, its items typed by the route. With filters and `caminhoFiltro`, a
 * filtered list comes from the /filtro route (no pages, capped by the API); otherwise the filters go
 * to the page route itself.
 */
export function Lista<P extends CaminhoDePagina>(props: {
  legenda: string;
  caminho: P;
  caminhoFiltro?: FiltroDe<P>;
  filtros?: CampoDef[];
  colunas: Coluna<ItemDe<P>>[];
  textoVazio: string;
  /** Filters applied from the start (a link such as /entregas?situacao=fila_de_erro). */
  filtrosIniciais?: Filtros;
  tamanho?: number;
  versao?: number;
  intervaloMs?: number;
  abaixo?: (contexto: { itens: ItemDe<P>[]; filtros: Filtros; recarregar: () => void }) => ComponentChildren;
}) {
  const [pagina, setPagina] = useState(1);
  const [filtros, setFiltros] = useState<Filtros>(props.filtrosIniciais ?? {});
  const tamanho = props.tamanho ?? 20;
  const { caminhoFiltro } = props;
  const filtrado = caminhoFiltro !== undefined && Object.keys(filtros).length > 0;
  const carga = useCarga(
    async (): Promise<Pagina<ItemDe<P>>> => {
      if (filtrado) {
        // FiltroDe<P> holds only the /filtro routes whose items are items of P; the compiler cannot follow a generic P there.
        const itens = (await lerFiltro(caminhoFiltro, filtros)) as ItemDe<P>[];
        return { itens, pagina: 1, tamanho: itens.length || 1, total: itens.length };
      }
      return lerPagina(props.caminho, { ...filtros, pagina, tamanho });
    },
    `${props.caminho}|${JSON.stringify(filtros)}|${pagina}|${props.versao ?? 0}`,
    props.intervaloMs,
  );
  return (
    <div class="lista">
      {props.filtros && (
        <FormularioDeFiltros
          campos={props.filtros}
          rotulo={`Filtros de ${props.legenda.toLowerCase()}`}
          iniciais={props.filtrosIniciais}
          aplicar={(f) => {
            setFiltros(f);
            setPagina(1);
          }}
        />
      )}
      <Estado carga={carga} vazio={(p) => p.itens.length === 0} textoVazio={props.textoVazio}>
        {(p) => (
          <>
            <Tabela legenda={props.legenda} colunas={props.colunas} itens={p.itens} />
            {filtrado ? (
              <p class="nota">{p.total} encontrados (a busca filtrada não pagina)</p>
            ) : (
              <Paginacao pagina={p.pagina} tamanho={p.tamanho} total={p.total} ir={setPagina} />
            )}
            {props.abaixo?.({ itens: p.itens, filtros, recarregar: carga.recarregar })}
          </>
        )}
      </Estado>
    </div>
  );
}

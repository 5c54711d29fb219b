import { useState } from 'preact/hooks';
import { type Corpo, cliente, dados, type ItemDe, type Resposta } from '../api';
import { useCarga } from '../carga';
import { type Filtros, Lista } from '../lista';
import { useAplicativos, useOpcoes, useTipos } from '../opcoes';
import { Link, navegar } from '../rota';
import { Acao, type Coluna, data, Estado, Json, Tabela, Titulo } from '../ui';

/** A delivery as GET /entrega lists it. */
export type Entrega = ItemDe<'/entrega'>;
/** A delivery with its attempts (GET /entrega/{id}). */
type EntregaDetalhada = Resposta<'/entrega/{id}', 'get'>;
/** The columns an attempt shows, alone (GET /tentativa) or in its delivery. */
export type Tentativa = Pick<
  ItemDe<'/tentativa'>,
  'id' | 'numero' | 'iniciada_em' | 'duracao_ms' | 'status_http' | 'sucesso' | 'erro'
> & { entrega_id?: string };

export const SITUACOES: Entrega['situacao'][] = [
  'pendente',
  'em_andamento',
  'aguardando_nova_tentativa',
  'concluida',
  'fila_de_erro',
  'cancelada',
];

export const Situacao = (props: { valor: string }) => <span class={`situacao ${props.valor}`}>{props.valor}</span>;

export const colunasDeEntrega: Coluna<Entrega>[] = [
  { rotulo: 'Entrega', valor: (e) => <Link para={`/entregas/${e.id}`}>{e.id.slice(-12)}</Link> },
  { rotulo: 'situacao', valor: (e) => <Situacao valor={e.situacao} /> },
  { rotulo: 'Assinante', valor: (e) => e.aplicativo_assinante_nome },
  { rotulo: 'Tipo', valor: (e) => `${e.tipo_de_evento_nome} v${e.versao_do_esquema}` },
  // An ordered subscription's place of the delivery in its entity's order (— when unordered).
  { rotulo: 'sequencia', valor: (e) => (e.sequencia === null ? '—' : `${e.entidade_id} #${e.sequencia}`) },
  { rotulo: 'Destino', valor: (e) => e.url_de_destino },
  {
    rotulo: 'Tentativas',
    valor: (e) => `${e.tentativas_no_ciclo_atual}/${e.maximo_de_tentativas} (${e.quantidade_de_tentativas})`,
  },
  { rotulo: 'Último erro', valor: (e) => e.ultimo_erro ?? '—' },
];

export const colunasDeTentativa: Coluna<Tentativa>[] = [
  { rotulo: 'Nº', valor: (t) => t.numero },
  { rotulo: 'Iniciada em', valor: (t) => data(t.iniciada_em) },
  { rotulo: 'Duração (ms)', valor: (t) => t.duracao_ms },
  { rotulo: 'status_http', valor: (t) => t.status_http ?? 'sem resposta' },
  { rotulo: 'Sucesso', valor: (t) => (t.sucesso ? 'sim' : <span class="ruim">não</span>) },
  { rotulo: 'Erro', valor: (t) => t.erro ?? '—' },
];

type CorpoDoReprocessamento = Corpo<'/reprocessamento', 'post'>;
const FILTROS_DO_ENDERECO = ['situacao', 'assinatura_id', 'evento_id'];

export function TelaEntregas(props: { podeCriar: boolean; podeEditar: boolean }) {
  const tipos = useTipos();
  const aplicativos = useAplicativos();
  const assinaturas = useOpcoes(
    '/assinatura',
    (a) => `${a.aplicativo_assinante_nome} · ${a.tipo_de_evento_nome} → ${a.url_de_destino}`,
  );
  const [selecao, setSelecao] = useState<Set<string>>(new Set());
  const alternar = (id: string) =>
    setSelecao((atual) => {
      const nova = new Set(atual);
      if (nova.has(id)) nova.delete(id);
      else nova.add(id);
      return nova;
    });
  const colunas: Coluna<Entrega>[] = [
    {
      rotulo: 'Selecionar',
      valor: (e) =>
        e.situacao === 'fila_de_erro' && props.podeCriar ? (
          <input
            type="checkbox"
            aria-label={`Selecionar a entrega ${e.id}`}
            checked={selecao.has(e.id)}
            onChange={() => alternar(e.id)}
          />
        ) : null,
    },
    ...colunasDeEntrega,
  ];
  // A link such as /entregas?situacao=fila_de_erro (from Filas) opens the list already filtered.
  const [iniciais] = useState(() => {
    const busca = new URLSearchParams(location.search);
    return Object.fromEntries(FILTROS_DO_ENDERECO.flatMap((n) => (busca.get(n) ? [[n, busca.get(n) ?? '']] : [])));
  });
  const reprocessar = (corpo: CorpoDoReprocessamento) =>
    dados(cliente.POST('/reprocessamento', { body: corpo })).then((r) => navegar(`/reprocessamentos/${r.id}`));
  return (
    <>
      <Titulo acoes={<Link para="/reprocessamentos">Reprocessamentos</Link>}>Entregas</Titulo>
      <Lista
        legenda="Entregas"
        caminho="/entrega"
        colunas={colunas}
        textoVazio="Nenhuma entrega."
        intervaloMs={5000}
        filtrosIniciais={iniciais}
        filtros={[
          {
            nome: 'situacao',
            rotulo: 'situacao',
            tipo: 'selecao',
            opcoes: SITUACOES.map((s) => ({ valor: s, rotulo: s })),
          },
          { nome: 'assinatura_id', rotulo: 'Assinatura', tipo: 'selecao', opcoes: assinaturas },
          { nome: 'evento_id', rotulo: 'evento_id' },
          { nome: 'aplicativo_assinante_id', rotulo: 'Aplicativo assinante', tipo: 'selecao', opcoes: aplicativos },
          { nome: 'tipo_de_evento_id', rotulo: 'Tipo de evento', tipo: 'selecao', opcoes: tipos },
        ]}
        abaixo={({ filtros }) =>
          props.podeCriar && (
            <div class="barra">
              <Acao
                rotulo={`Reprocessar selecionadas (${selecao.size})`}
                fazer={async () => {
                  if (selecao.size === 0) throw new Error('Selecione entregas na fila de erro.');
                  await reprocessar({ entrega_ids: [...selecao] });
                  setSelecao(new Set());
                }}
              />
              <ReprocessarPeloFiltro filtros={filtros} reprocessar={reprocessar} />
            </div>
          )
        }
      />
      {!props.podeEditar && <p class="nota">Reenviar uma entrega pede monitoramento.editar.</p>}
    </>
  );
}

/** The list's filters that POST /reprocessamento cannot take: with one of them set, no request by filter. */
const FORA_DO_REPROCESSAMENTO: Record<string, string> = {
  evento_id: 'evento_id',
  aplicativo_assinante_id: 'aplicativo assinante',
};

/**
 * The error queue reprocessed by the list's filter, as POST /reprocessamento takes it (subscription
 * and type; `situacao` may only be fila_de_erro). The button says what it will take, and asks first.
 */
function ReprocessarPeloFiltro(props: {
  filtros: Filtros;
  reprocessar: (corpo: CorpoDoReprocessamento) => Promise<void>;
}) {
  const { filtros } = props;
  const fora = Object.keys(FORA_DO_REPROCESSAMENTO).filter((nome) => filtros[nome]);
  if (filtros.situacao && filtros.situacao !== 'fila_de_erro') fora.push(`situacao ${filtros.situacao}`);
  if (fora.length > 0)
    return (
      <p class="nota">
        Reprocessar pelo filtro considera só assinatura e tipo de evento na fila de erro: tire o filtro de{' '}
        {fora.join(', ')} ou escolha as entregas.
      </p>
    );
  const corpo: CorpoDoReprocessamento = {
    ...(filtros.assinatura_id ? { assinatura_id: filtros.assinatura_id } : {}),
    ...(filtros.tipo_de_evento_id ? { tipo_de_evento_id: filtros.tipo_de_evento_id } : {}),
  };
  const toda = Object.keys(corpo).length === 0;
  return (
    <Acao
      rotulo={toda ? 'Reprocessar toda a fila de erro' : 'Reprocessar a fila de erro pelo filtro'}
      confirmar={
        toda
          ? 'Todas as entregas na fila de erro, de todas as assinaturas, voltam a ser tentadas.'
          : 'As entregas na fila de erro da assinatura e do tipo filtrados voltam a ser tentadas.'
      }
      fazer={() => props.reprocessar(corpo)}
    />
  );
}

export function TelaEntrega(props: { id: string; podeReenviar: boolean }) {
  const carga = useCarga(
    (): Promise<EntregaDetalhada> => dados(cliente.GET('/entrega/{id}', { params: { path: { id: props.id } } })),
    props.id,
    3000,
  );
  return (
    <>
      <Titulo
        acoes={
          props.podeReenviar && (
            <Acao
              rotulo="Reenviar"
              fazer={() => dados(cliente.POST('/entrega/{id}/reenviar', { params: { path: { id: props.id } } }))}
              depois={carga.recarregar}
            />
          )
        }
      >
        Entrega
      </Titulo>
      <Estado carga={carga}>
        {(e) => (
          <>
            <dl class="detalhe">
              <dt>id</dt>
              <dd>{e.id}</dd>
              <dt>situacao</dt>
              <dd>
                <Situacao valor={e.situacao} />
              </dd>
              <dt>Evento</dt>
              <dd>
                <Link para={`/eventos/${e.evento_id}`}>{e.evento_id}</Link>
              </dd>
              <dt>Assinante</dt>
              <dd>{e.aplicativo_assinante_nome}</dd>
              <dt>sequencia</dt>
              <dd>
                {e.sequencia === null
                  ? '— (assinatura sem entrega ordenada)'
                  : `${e.sequencia} na ordem de ${e.entidade_id}`}
              </dd>
              <dt>Destino</dt>
              <dd>{e.url_de_destino}</dd>
              <dt>Tentativas</dt>
              <dd>
                {e.tentativas_no_ciclo_atual} de {e.maximo_de_tentativas} neste ciclo, {e.quantidade_de_tentativas} no
                total
              </dd>
              <dt>Próxima tentativa</dt>
              <dd>{data(e.proxima_tentativa_em)}</dd>
              <dt>Entregue em</dt>
              <dd>{data(e.entregue_em)}</dd>
              <dt>Último erro</dt>
              <dd>{e.ultimo_erro ?? '—'}</dd>
            </dl>
            <h2>Tentativas</h2>
            {e.tentativas.length ? (
              <>
                <Tabela legenda="Tentativas da entrega" colunas={colunasDeTentativa} itens={e.tentativas} />
                <h3>Cabeçalhos enviados na última tentativa</h3>
                <Json valor={e.tentativas[e.tentativas.length - 1]?.cabecalhos} rotulo="cabeçalhos enviados" />
              </>
            ) : (
              <p class="estado vazio">Nenhuma tentativa ainda.</p>
            )}
          </>
        )}
      </Estado>
    </>
  );
}

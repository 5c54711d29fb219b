import { useState } from 'preact/hooks';
import { api } from '../api';
import { useCarga } from '../carga';
import { Lista } from '../lista';
import { useAplicativos, useOpcoes, useTipos } from '../opcoes';
import { Link, navegar } from '../rota';
import { Acao, type Coluna, data, Estado, Json, Tabela, Titulo } from '../ui';

export interface Entrega {
  id: string;
  evento_id: string;
  evento_recebido_em: string;
  entidade_id: string;
  assinatura_id: string;
  aplicativo_assinante_id: string;
  aplicativo_assinante_nome: string;
  tipo_de_evento_nome: string;
  versao_do_esquema: number;
  url_de_destino: string;
  situacao: string;
  quantidade_de_tentativas: number;
  tentativas_no_ciclo_atual: number;
  maximo_de_tentativas: number;
  proxima_tentativa_em: string;
  entregue_em?: string | null;
  ultimo_erro?: string | null;
  criada_em: string;
  atualizada_em: string;
}
export interface Tentativa {
  id: string;
  entrega_id?: string;
  numero: number;
  iniciada_em: string;
  duracao_ms: number;
  status_http: number | null;
  sucesso: boolean;
  resposta: string | null;
  erro: string | null;
  cabecalhos: Record<string, unknown>;
}

export const SITUACOES = [
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

export function TelaEntregas(props: { podeCriar: boolean; podeEditar: boolean }) {
  const tipos = useTipos();
  const aplicativos = useAplicativos();
  const assinaturas = useOpcoes<{
    id: string;
    aplicativo_assinante_nome: string;
    tipo_de_evento_nome: string;
    url_de_destino: string;
  }>('/assinatura', (a) => `${a.aplicativo_assinante_nome} · ${a.tipo_de_evento_nome} → ${a.url_de_destino}`);
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
  const reprocessar = (corpo: Record<string, unknown>) =>
    api<{ id: string }>('POST', '/reprocessamento', corpo).then((r) => navegar(`/reprocessamentos/${r.id}`));
  return (
    <>
      <Titulo acoes={<Link para="/reprocessamentos">Reprocessamentos</Link>}>Entregas</Titulo>
      <Lista<Entrega>
        legenda="Entregas"
        caminho="/entrega"
        colunas={colunas}
        textoVazio="Nenhuma entrega."
        intervaloMs={5000}
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
              <Acao
                rotulo="Reprocessar a fila de erro pelo filtro"
                fazer={() =>
                  reprocessar({
                    ...(filtros.assinatura_id ? { assinatura_id: filtros.assinatura_id } : {}),
                    ...(filtros.tipo_de_evento_id ? { tipo_de_evento_id: filtros.tipo_de_evento_id } : {}),
                  })
                }
              />
            </div>
          )
        }
      />
      {!props.podeEditar && <p class="nota">Reenviar uma entrega pede monitoramento.editar.</p>}
    </>
  );
}

export function TelaEntrega(props: { id: string; podeReenviar: boolean }) {
  const carga = useCarga(
    () => api<Entrega & { tentativas: Tentativa[] }>('GET', `/entrega/${props.id}`),
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
              fazer={() => api('POST', `/entrega/${props.id}/reenviar`)}
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

interface Solicitacao {
  id: string;
  situacao: string;
  entrega_ids: string[] | null;
  assinatura_id: string | null;
  tipo_de_evento_id: string | null;
  desde: string | null;
  ate: string | null;
  quantidade_de_entregas: number;
  reprocessadas: number;
  ignoradas?: number;
  solicitada_pelo_email?: string | null;
  criada_em: string;
  concluida_em?: string | null;
}

const colunasDeSolicitacao: Coluna<Solicitacao>[] = [
  { rotulo: 'Criada em', valor: (s) => <Link para={`/reprocessamentos/${s.id}`}>{data(s.criada_em)}</Link> },
  { rotulo: 'situacao', valor: (s) => <Situacao valor={s.situacao} /> },
  { rotulo: 'Entregas', valor: (s) => s.quantidade_de_entregas },
  { rotulo: 'Reprocessadas', valor: (s) => s.reprocessadas },
  { rotulo: 'Pedida por', valor: (s) => s.solicitada_pelo_email ?? '—' },
];

export function TelaReprocessamentos() {
  return (
    <>
      <Titulo>Reprocessamentos</Titulo>
      <Lista<Solicitacao>
        legenda="Solicitações de reprocessamento"
        caminho="/reprocessamento"
        colunas={colunasDeSolicitacao}
        textoVazio="Nenhum reprocessamento pedido."
        intervaloMs={3000}
      />
    </>
  );
}

export function TelaReprocessamento(props: { id: string }) {
  const carga = useCarga(() => api<Solicitacao>('GET', `/reprocessamento/${props.id}`), props.id, 1500);
  return (
    <>
      <Titulo>Reprocessamento</Titulo>
      <Estado carga={carga}>
        {(s) => (
          <>
            <dl class="detalhe">
              <dt>situacao</dt>
              <dd>
                <Situacao valor={s.situacao} />
              </dd>
              <dt>Progresso</dt>
              <dd>
                <progress
                  max={Math.max(1, s.quantidade_de_entregas)}
                  value={s.reprocessadas}
                  aria-label="Progresso do reprocessamento"
                />{' '}
                {s.reprocessadas} de {s.quantidade_de_entregas} reprocessadas
                {s.ignoradas ? `, ${s.ignoradas} ignoradas` : ''}
              </dd>
              <dt>Pedido</dt>
              <dd>
                {s.entrega_ids ? `${s.entrega_ids.length} entregas escolhidas` : 'pelo filtro'}
                {s.assinatura_id ? ` · assinatura ${s.assinatura_id}` : ''}
                {s.tipo_de_evento_id ? ` · tipo ${s.tipo_de_evento_id}` : ''}
              </dd>
              <dt>Criada em</dt>
              <dd>{data(s.criada_em)}</dd>
              <dt>Concluída em</dt>
              <dd>{data(s.concluida_em)}</dd>
            </dl>
            <Link para="/entregas">Ver entregas</Link>
          </>
        )}
      </Estado>
    </>
  );
}

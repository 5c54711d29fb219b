import { cliente, dados, type ItemDe, type Resposta } from '../api';
import { useCarga } from '../carga';
import { Lista } from '../lista';
import { Link } from '../rota';
import { type Coluna, data, Estado, Tabela, Titulo } from '../ui';
import { colunasDeEntrega, type Entrega, Situacao } from './entregas';

type Solicitacao = ItemDe<'/reprocessamento'>;
type SolicitacaoDetalhada = Resposta<'/reprocessamento/{id}', 'get'>;

/** The chosen deliveries shown beside the progress: enough to watch them conclude without leaving. */
const ENTREGAS_ACOMPANHADAS = 20;

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
      <Lista
        legenda="Solicitações de reprocessamento"
        caminho="/reprocessamento"
        colunas={colunasDeSolicitacao}
        textoVazio="Nenhum reprocessamento pedido."
        intervaloMs={3000}
      />
    </>
  );
}

/** The request and, when it named its deliveries, where each of them is now (refreshed). */
async function carregar(id: string): Promise<{ s: SolicitacaoDetalhada; entregas: Entrega[] }> {
  const s = await dados(cliente.GET('/reprocessamento/{id}', { params: { path: { id } } }));
  const ids = (s.entrega_ids ?? []).slice(0, ENTREGAS_ACOMPANHADAS);
  // GET /entrega/{id} answers the list's fields too; one request per chosen delivery, at most 20.
  const entregas = await Promise.all(
    ids.map((e) => dados(cliente.GET('/entrega/{id}', { params: { path: { id: e } } }))),
  );
  return { s, entregas };
}

export function TelaReprocessamento(props: { id: string }) {
  const carga = useCarga(() => carregar(props.id), props.id, 1500);
  return (
    <>
      <Titulo>Reprocessamento</Titulo>
      <Estado carga={carga}>
        {({ s, entregas }) => (
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
                <span role="status">
                  {s.reprocessadas} de {s.quantidade_de_entregas} reprocessadas
                  {s.ignoradas ? `, ${s.ignoradas} ignoradas` : ''}
                </span>
              </dd>
              <dt>Pedido</dt>
              <dd>
                {s.entrega_ids ? `${s.entrega_ids.length} entregas escolhidas` : 'pelo filtro'}
                {s.assinatura_id ? ` · assinatura ${s.assinatura_id}` : ''}
                {s.tipo_de_evento_id ? ` · tipo ${s.tipo_de_evento_id}` : ''}
              </dd>
              <dt>Pedida por</dt>
              <dd>{s.solicitada_pelo_email ?? '—'}</dd>
              <dt>Criada em</dt>
              <dd>{data(s.criada_em)}</dd>
              <dt>Concluída em</dt>
              <dd>{data(s.concluida_em)}</dd>
            </dl>
            {entregas.length > 0 && (
              <>
                <h2>Entregas escolhidas, agora</h2>
                <Tabela legenda="Entregas do reprocessamento" colunas={colunasDeEntrega} itens={entregas} />
                {(s.entrega_ids?.length ?? 0) > entregas.length && (
                  <p class="nota">
                    As primeiras {entregas.length} de {s.entrega_ids?.length}.
                  </p>
                )}
              </>
            )}
            <Link para="/entregas">Ver entregas</Link>
          </>
        )}
      </Estado>
    </>
  );
}

import { cliente, dados, type Resposta } from '../api';
import { useCarga } from '../carga';
import { formatarLatencia } from '../latencia';
import { Estado, Tabela, Titulo } from '../ui';

type Resumo = Resposta<'/evento/resumo', 'get'>;
type PorHora = Resumo['por_hora'][number];
/** The fields of `T` that are counts. */
type Contagem<T> = { [K in keyof T]: T[K] extends number ? K : never }[keyof T];

const FIGURAS: [Contagem<Resumo>, string][] = [
  ['eventos_nas_ultimas_24_horas', 'Eventos nas últimas 24 horas'],
  ['recusados_nas_ultimas_24_horas', 'Recusados nas últimas 24 horas'],
  ['entregues_nas_ultimas_24_horas', 'Entregues nas últimas 24 horas'],
  ['tentativas_com_falha_nas_ultimas_24_horas', 'Tentativas com falha nas últimas 24 horas'],
  ['entregas_pendentes', 'Entregas pendentes'],
  ['entregas_aguardando_nova_tentativa', 'Aguardando nova tentativa'],
  ['entregas_na_fila_de_erro', 'Na fila de erro'],
  ['aplicativos_ativos', 'Aplicativos ativos'],
  ['tipos_de_evento_ativos', 'Tipos de evento ativos'],
  ['assinaturas_ativas', 'Assinaturas ativas'],
];
const SERIES: [Contagem<PorHora>, string, string][] = [
  ['eventos', 'eventos', '#1d5fbf'],
  ['recusados', 'recusados', '#b35c00'],
  ['entregas_com_falha', 'entregas com falha', '#b3261e'],
];
export const INTERVALO_DO_RESUMO_MS = 5000;

/** The 24 hourly bands as grouped bars: plain SVG, no chart library. */
function Grafico(props: { por_hora: PorHora[] }) {
  const largura = 720;
  const altura = 220;
  const margem = 28;
  const maximo = Math.max(1, ...props.por_hora.flatMap((h) => [h.eventos, h.recusados, h.entregas_com_falha]));
  const faixa = (largura - margem) / Math.max(1, props.por_hora.length);
  const barra = Math.max(1, (faixa - 4) / SERIES.length);
  const y = (v: number) => altura - margem - ((altura - 2 * margem) * v) / maximo;
  const resumo = props.por_hora.reduce((s, h) => s + h.eventos, 0);
  return (
    <figure class="grafico">
      <svg viewBox={`0 0 ${largura} ${altura}`} role="img" aria-labelledby="grafico-titulo">
        <title id="grafico-titulo">
          Eventos, recusados e entregas com falha por hora nas últimas 24 horas ({resumo} eventos)
        </title>
        <line x1={margem} x2={largura} y1={altura - margem} y2={altura - margem} stroke="#555" />
        <text x={2} y={margem} font-size="11" fill="#333">
          {maximo}
        </text>
        {props.por_hora.map((h, i) => {
          const x0 = margem + i * faixa + 2;
          return (
            <g key={h.hora}>
              {SERIES.map(([campo, nome, cor], j) => {
                const valor = h[campo];
                return (
                  <rect
                    key={campo}
                    x={x0 + j * barra}
                    y={y(valor)}
                    width={barra}
                    height={altura - margem - y(valor)}
                    fill={cor}
                  >
                    <title>
                      {new Date(h.hora).toLocaleTimeString('pt-BR', { hour: '2-digit', minute: '2-digit' })}: {valor}{' '}
                      {nome}
                    </title>
                  </rect>
                );
              })}
              {i % 3 === 0 && (
                <text x={x0} y={altura - 8} font-size="11" fill="#333">
                  {new Date(h.hora).toLocaleTimeString('pt-BR', { hour: '2-digit' })}h
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption class="legenda">
        {SERIES.map(([campo, nome, cor]) => (
          <span key={campo}>
            <i style={{ background: cor }} aria-hidden="true" /> {nome}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

const horaDaBanda = (h: PorHora) =>
  new Date(h.hora).toLocaleTimeString('pt-BR', { hour: '2-digit', minute: '2-digit' });

/**
 * The hours that had something (newest first): the counts, and the latency of the deliveries
 * concluded in the hour, from the event's acceptance to its delivery (p50 and p99).
 */
function TabelaPorHora(props: { por_hora: PorHora[] }) {
  const ativas = props.por_hora
    .filter((h) => h.eventos + h.recusados + h.entregas_com_falha > 0 || h.latencia_p50_ms !== null)
    .reverse();
  if (ativas.length === 0) return <p class="nota">Nenhuma atividade nas últimas 24 horas.</p>;
  return (
    <Tabela<PorHora>
      legenda="Por hora: quantidades e latência das entregas"
      itens={ativas}
      chave={(h) => h.hora}
      colunas={[
        { rotulo: 'Hora', valor: horaDaBanda },
        { rotulo: 'Eventos', valor: (h) => h.eventos.toLocaleString('pt-BR') },
        { rotulo: 'Recusados', valor: (h) => h.recusados.toLocaleString('pt-BR') },
        { rotulo: 'Entregas com falha', valor: (h) => h.entregas_com_falha.toLocaleString('pt-BR') },
        { rotulo: 'Latência p50', valor: (h) => formatarLatencia(h.latencia_p50_ms) },
        { rotulo: 'Latência p99', valor: (h) => formatarLatencia(h.latencia_p99_ms) },
      ]}
    />
  );
}

export function TelaResumo() {
  const carga = useCarga(() => dados(cliente.GET('/evento/resumo')), 'resumo', INTERVALO_DO_RESUMO_MS);
  return (
    <>
      <Titulo>Resumo</Titulo>
      <Estado carga={carga}>
        {(r) => (
          <>
            <ul class="figuras" aria-label="Figuras do resumo">
              {FIGURAS.map(([campo, rotulo]) => (
                <li key={campo} class={campo === 'entregas_na_fila_de_erro' && r[campo] ? 'alerta' : undefined}>
                  <strong>{r[campo].toLocaleString('pt-BR')}</strong>
                  <span>{rotulo}</span>
                </li>
              ))}
            </ul>
            <h2>Por hora</h2>
            <Grafico por_hora={r.por_hora} />
            <TabelaPorHora por_hora={r.por_hora} />
            <p class="nota">
              Latência: do aceite do evento à conclusão da entrega (tentativas e esperas incluídas), das entregas
              concluídas na hora; p50 e p99 lidos de faixas fixas, com erro de até 4,5 %.
            </p>
            <p class="nota">Atualizado a cada {INTERVALO_DO_RESUMO_MS / 1000} segundos.</p>
          </>
        )}
      </Estado>
    </>
  );
}

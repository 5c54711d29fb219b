import { useState } from 'preact/hooks';
import { cliente, dados, type ItemDe } from '../api';
import { Lista } from '../lista';
import { useOpcoes } from '../opcoes';
import { Link } from '../rota';
import { Acao, data, Titulo } from '../ui';

type Destino = ItemDe<'/destino'>;
type SituacaoDoCircuito = Destino['circuito']['situacao'];

const NOME_DO_CIRCUITO: Record<SituacaoDoCircuito, string> = {
  fechado: 'fechado',
  aberto: 'aberto',
  meio_aberto: 'meio aberto',
};

/**
 * The circuit's state, since when, when the next probe may go, its latest transitions, and for an
 * operator the close by hand (POST /destino/{id}/fechar-circuito).
 */
function Circuito(props: { destino: Destino; podeEditar: boolean; depois: () => void }) {
  const { circuito, origem, id } = props.destino;
  const nome = NOME_DO_CIRCUITO[circuito.situacao];
  return (
    <span class="circuito">
      circuito {circuito.situacao === 'fechado' ? nome : <strong class="ruim">{nome}</strong>}
      {circuito.desde && ` desde ${data(circuito.desde)}`}
      {circuito.situacao === 'aberto' && circuito.aberto_ate && ` · sonda a partir de ${data(circuito.aberto_ate)}`}{' '}
      {props.podeEditar && circuito.situacao !== 'fechado' && (
        <Acao
          rotulo="Fechar circuito"
          rotuloAcessivel={`Fechar circuito de ${origem}`}
          fazer={() => dados(cliente.POST('/destino/{id}/fechar-circuito', { params: { path: { id } } }))}
          depois={props.depois}
        />
      )}
      {circuito.historico.length > 0 && (
        <details class="historico">
          <summary>
            Histórico<span class="invisivel"> do circuito de {origem}</span> ({circuito.historico.length})
          </summary>
          <ol>
            {circuito.historico.map((t) => (
              <li key={`${t.em}-${t.para}`}>
                {data(t.em)}: {NOME_DO_CIRCUITO[t.de]} → {NOME_DO_CIRCUITO[t.para]} ({t.motivo}
                {t.por ? `, por ${t.por}` : ''}): {t.detalhe}
              </li>
            ))}
          </ol>
        </details>
      )}
    </span>
  );
}

function Limites(props: { destino: Destino; depois: () => void }) {
  const [concorrencia, setConcorrencia] = useState(String(props.destino.concorrencia_maxima));
  const [limite, setLimite] = useState(
    props.destino.limite_por_segundo === null ? '' : String(props.destino.limite_por_segundo),
  );
  const id = `limites-${props.destino.id}`;
  return (
    <span class="limites">
      <label for={`${id}-c`} class="invisivel">
        concorrencia_maxima de {props.destino.origem}
      </label>
      <input
        id={`${id}-c`}
        type="number"
        min={1}
        value={concorrencia}
        onInput={(e) => setConcorrencia(e.currentTarget.value)}
      />
      <label for={`${id}-l`} class="invisivel">
        limite_por_segundo de {props.destino.origem}
      </label>
      <input
        id={`${id}-l`}
        type="number"
        min={1}
        placeholder="sem"
        value={limite}
        onInput={(e) => setLimite(e.currentTarget.value)}
      />
      <Acao
        rotulo="Salvar"
        rotuloAcessivel={`Salvar limites de ${props.destino.origem}`}
        fazer={() =>
          dados(
            cliente.PATCH('/destino/{id}', {
              params: { path: { id: props.destino.id } },
              body: {
                concorrencia_maxima: Number(concorrencia),
                limite_por_segundo: limite === '' ? null : Number(limite),
              },
            }),
          )
        }
        depois={props.depois}
      />
    </span>
  );
}

export function TelaDestinos(props: { podeEditar: boolean }) {
  const [versao, setVersao] = useState(0);
  const depois = () => setVersao((v) => v + 1);
  return (
    <>
      <Titulo>Destinos</Titulo>
      <Lista
        legenda="Destinos"
        caminho="/destino"
        versao={versao}
        intervaloMs={5000}
        textoVazio="Nenhum destino: nenhuma assinatura ainda."
        colunas={[
          { rotulo: 'Origem', valor: (d) => d.origem },
          { rotulo: 'Assinaturas', valor: (d) => d.assinaturas },
          { rotulo: 'Em andamento', valor: (d) => d.em_andamento },
          {
            rotulo: 'Tentativas / falhas (1 h)',
            valor: (d) => `${d.tentativas_na_ultima_hora} / ${d.falhas_na_ultima_hora}`,
          },
          { rotulo: 'p50 / p99 (ms)', valor: (d) => `${d.latencia_p50_ms ?? '—'} / ${d.latencia_p99_ms ?? '—'}` },
          {
            rotulo: 'Limites',
            valor: (d) =>
              props.podeEditar ? (
                <Limites destino={d} depois={depois} />
              ) : (
                `${d.concorrencia_maxima} · ${d.limite_por_segundo ?? 'sem'}/s`
              ),
          },
          {
            // Whether its deliveries are held: the pause an operator sets, the circuit the failures open.
            rotulo: 'Pausa e circuito',
            valor: (d) => (
              <>
                {d.pausado ? <strong class="ruim">pausado</strong> : 'não pausado'}{' '}
                {props.podeEditar && (
                  <Acao
                    rotulo={d.pausado ? 'Retomar' : 'Pausar'}
                    rotuloAcessivel={`${d.pausado ? 'Retomar' : 'Pausar'} ${d.origem}`}
                    fazer={() =>
                      dados(
                        cliente.POST(d.pausado ? '/destino/{id}/retomar' : '/destino/{id}/pausar', {
                          params: { path: { id: d.id } },
                        }),
                      )
                    }
                    depois={depois}
                  />
                )}
                <Circuito destino={d} podeEditar={props.podeEditar} depois={depois} />
              </>
            ),
          },
        ]}
      />
    </>
  );
}

export function TelaTentativas() {
  const assinaturas = useOpcoes('/assinatura', (a) => `${a.aplicativo_assinante_nome} · ${a.tipo_de_evento_nome}`);
  return (
    <>
      <Titulo>Tentativas</Titulo>
      <Lista
        legenda="Tentativas"
        caminho="/tentativa"
        textoVazio="Nenhuma tentativa."
        filtros={[
          { nome: 'entrega_id', rotulo: 'entrega_id' },
          { nome: 'assinatura_id', rotulo: 'Assinatura', tipo: 'selecao', opcoes: assinaturas },
          {
            nome: 'sucesso',
            rotulo: 'Sucesso',
            tipo: 'selecao',
            opcoes: [
              { valor: 'true', rotulo: 'sim' },
              { valor: 'false', rotulo: 'não' },
            ],
          },
          { nome: 'status_http', rotulo: 'status_http', tipo: 'numero' },
          { nome: 'desde', rotulo: 'Desde', tipo: 'data' },
          { nome: 'ate', rotulo: 'Até', tipo: 'data' },
        ]}
        colunas={[
          { rotulo: 'Iniciada em', valor: (t) => data(t.iniciada_em) },
          {
            rotulo: 'Entrega',
            valor: (t) => <Link para={`/entregas/${t.entrega_id}`}>{(t.entrega_id ?? '').slice(-12)}</Link>,
          },
          { rotulo: 'Nº', valor: (t) => t.numero },
          { rotulo: 'status_http', valor: (t) => t.status_http ?? 'sem resposta' },
          { rotulo: 'Duração (ms)', valor: (t) => t.duracao_ms },
          { rotulo: 'Sucesso', valor: (t) => (t.sucesso ? 'sim' : <span class="ruim">não</span>) },
          { rotulo: 'Erro', valor: (t) => t.erro ?? '—' },
        ]}
      />
    </>
  );
}

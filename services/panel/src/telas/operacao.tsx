import { useState } from 'preact/hooks';
import { api } from '../api';
import { useCarga } from '../carga';
import { Lista } from '../lista';
import { useOpcoes } from '../opcoes';
import { Link } from '../rota';
import { Acao, data, Estado, Json, Tabela, Titulo } from '../ui';
import type { Tentativa } from './entregas';

interface Fila {
  nome: string;
  papel: string;
  mensagens: number;
  consumidores: number;
}

export function TelaFilas(props: { podeEditar: boolean }) {
  const carga = useCarga(
    () => api<Fila[] | { itens: Fila[] }>('GET', '/fila').then((r) => (Array.isArray(r) ? r : r.itens)),
    'filas',
    5000,
  );
  const [conciliacao, setConciliacao] = useState<unknown>();
  return (
    <>
      <Titulo
        acoes={
          props.podeEditar && (
            <Acao
              rotulo="Conciliar a fila de erro"
              fazer={() => api('POST', '/fila/erro/conciliar')}
              depois={setConciliacao}
            />
          )
        }
      >
        Filas
      </Titulo>
      <Estado carga={carga} vazio={(f) => f.length === 0} textoVazio="Nenhuma fila declarada.">
        {(filas) => (
          <Tabela
            legenda="Filas de entrega"
            chave={(f) => f.nome}
            itens={filas}
            colunas={[
              { rotulo: 'Nome', valor: (f) => f.nome },
              { rotulo: 'Papel', valor: (f) => f.papel },
              { rotulo: 'Mensagens', valor: (f) => f.mensagens.toLocaleString('pt-BR') },
              { rotulo: 'Consumidores', valor: (f) => f.consumidores },
            ]}
          />
        )}
      </Estado>
      {conciliacao !== undefined && (
        <>
          <h2>Resultado da conciliação</h2>
          <Json valor={conciliacao} rotulo="Resultado da conciliação" />
        </>
      )}
    </>
  );
}

interface Destino {
  id: string;
  origem: string;
  assinaturas: number;
  em_andamento: number;
  concorrencia_maxima: number;
  limite_por_segundo: number | null;
  pausado: boolean;
  tentativas_na_ultima_hora: number;
  falhas_na_ultima_hora: number;
  latencia_p50_ms: number | null;
  latencia_p99_ms: number | null;
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
          api('PATCH', `/destino/${props.destino.id}`, {
            concorrencia_maxima: Number(concorrencia),
            limite_por_segundo: limite === '' ? null : Number(limite),
          })
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
      <Lista<Destino>
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
            rotulo: 'Pausado',
            valor: (d) => (
              <>
                {d.pausado ? <strong class="ruim">pausado</strong> : 'não'}{' '}
                {props.podeEditar && (
                  <Acao
                    rotulo={d.pausado ? 'Retomar' : 'Pausar'}
                    rotuloAcessivel={`${d.pausado ? 'Retomar' : 'Pausar'} ${d.origem}`}
                    fazer={() => api('POST', `/destino/${d.id}/${d.pausado ? 'retomar' : 'pausar'}`)}
                    depois={depois}
                  />
                )}
              </>
            ),
          },
        ]}
      />
    </>
  );
}

export function TelaTentativas() {
  const assinaturas = useOpcoes<{ id: string; aplicativo_assinante_nome: string; tipo_de_evento_nome: string }>(
    '/assinatura',
    (a) => `${a.aplicativo_assinante_nome} · ${a.tipo_de_evento_nome}`,
  );
  return (
    <>
      <Titulo>Tentativas</Titulo>
      <Lista<Tentativa>
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

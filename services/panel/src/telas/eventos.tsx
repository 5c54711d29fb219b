import { useState } from 'preact/hooks';
import { api } from '../api';
import { useCarga } from '../carga';
import { Lista } from '../lista';
import { useAplicativos, useOpcoes, useTipos } from '../opcoes';
import { Link, navegar } from '../rota';
import { type Coluna, data, Estado, Formulario, Json, Tabela, Titulo } from '../ui';
import { colunasDeEntrega, type Entrega } from './entregas';

export interface Evento {
  id: string;
  tipo_de_evento_id: string;
  tipo_de_evento_nome: string;
  versao_do_esquema: number;
  aplicativo_publicador_id: string;
  aplicativo_publicador_nome: string;
  entidade_id: string;
  ocorrido_em: string;
  recebido_em: string;
  publicado_pelo_email?: string | null;
  quantidade_de_entregas: number;
  entregas_concluidas: number;
  entregas_na_fila: number;
  entregas_na_fila_de_erro: number;
}
interface EventoDetalhado extends Evento {
  dados: unknown;
  entregas: Entrega[];
}

const colunas: Coluna<Evento>[] = [
  { rotulo: 'Recebido em', valor: (e) => <Link para={`/eventos/${e.id}`}>{data(e.recebido_em)}</Link> },
  { rotulo: 'Tipo', valor: (e) => `${e.tipo_de_evento_nome} v${e.versao_do_esquema}` },
  { rotulo: 'Publicador', valor: (e) => e.publicado_pelo_email ?? e.aplicativo_publicador_nome },
  { rotulo: 'Entidade', valor: (e) => e.entidade_id },
  { rotulo: 'Entregas', valor: (e) => e.quantidade_de_entregas },
  { rotulo: 'Concluídas', valor: (e) => e.entregas_concluidas },
  { rotulo: 'Na fila', valor: (e) => e.entregas_na_fila },
  {
    rotulo: 'Fila de erro',
    valor: (e) => (e.entregas_na_fila_de_erro ? <strong class="ruim">{e.entregas_na_fila_de_erro}</strong> : 0),
  },
];

export function TelaEventos(props: { podeCriar: boolean }) {
  const tipos = useTipos();
  const aplicativos = useAplicativos();
  return (
    <>
      <Titulo acoes={props.podeCriar && <Link para="/eventos/publicar">Publicar evento de teste</Link>}>Eventos</Titulo>
      <Lista<Evento>
        legenda="Eventos"
        caminho="/evento"
        caminhoFiltro="/evento/filtro"
        colunas={colunas}
        textoVazio="Nenhum evento."
        filtros={[
          { nome: 'id', rotulo: 'id' },
          { nome: 'tipo_de_evento_id', rotulo: 'Tipo de evento', tipo: 'selecao', opcoes: tipos },
          { nome: 'aplicativo_publicador_id', rotulo: 'Aplicativo publicador', tipo: 'selecao', opcoes: aplicativos },
          { nome: 'entidade_id', rotulo: 'entidade_id' },
          { nome: 'desde', rotulo: 'Desde', tipo: 'data' },
          { nome: 'ate', rotulo: 'Até', tipo: 'data' },
        ]}
      />
    </>
  );
}

export function TelaEvento(props: { id: string }) {
  const carga = useCarga(() => api<EventoDetalhado>('GET', `/evento/${props.id}`), props.id, 3000);
  return (
    <>
      <Titulo>Evento</Titulo>
      <Estado carga={carga}>
        {(e) => (
          <>
            <dl class="detalhe">
              <dt>id</dt>
              <dd>{e.id}</dd>
              <dt>Tipo</dt>
              <dd>
                {e.tipo_de_evento_nome} v{e.versao_do_esquema}
              </dd>
              <dt>Publicador</dt>
              <dd>
                {e.aplicativo_publicador_nome}
                {e.publicado_pelo_email ? ` (por ${e.publicado_pelo_email})` : ''}
              </dd>
              <dt>entidade_id</dt>
              <dd>{e.entidade_id}</dd>
              <dt>Ocorrido em</dt>
              <dd>{data(e.ocorrido_em)}</dd>
              <dt>Recebido em</dt>
              <dd>{data(e.recebido_em)}</dd>
              <dt>Entregas</dt>
              <dd>
                {e.quantidade_de_entregas} ({e.entregas_concluidas} concluídas, {e.entregas_na_fila} na fila,{' '}
                {e.entregas_na_fila_de_erro} na fila de erro)
              </dd>
            </dl>
            <h2>dados</h2>
            <Json valor={e.dados} rotulo="dados do evento" />
            <h2>Entregas</h2>
            {e.entregas.length ? (
              <Tabela legenda="Entregas do evento" colunas={colunasDeEntrega} itens={e.entregas} />
            ) : (
              <p class="estado vazio">Nenhuma assinatura ativa recebeu este evento.</p>
            )}
          </>
        )}
      </Estado>
    </>
  );
}

interface VersaoResumo {
  id: string;
  tipo_de_evento_nome: string;
  versao: number;
}

export function TelaPublicar() {
  const tipos = useTipos();
  const [tipo, setTipo] = useState('');
  const [versao, setVersao] = useState('');
  const versoes = useOpcoes<VersaoResumo>(
    tipo ? `/versao-de-esquema/autocomplete?tipo_de_evento_id=${tipo}` : undefined,
    (v) => `versão ${v.versao}`,
    (v) => String(v.versao),
  );
  const nome = tipos.find((t) => t.valor === tipo)?.rotulo;
  const esquema = useCarga(
    () => (nome && versao ? api<unknown>('GET', `/esquema/${nome}/${versao}`) : Promise.resolve(undefined)),
    `${nome}/${versao}`,
  );
  return (
    <>
      <Titulo>Publicar evento de teste</Titulo>
      <div class="duas-colunas">
        <Formulario
          titulo="Novo evento"
          rotulo="Publicar"
          campos={[
            {
              nome: 'tipo_de_evento_id',
              rotulo: 'Tipo de evento',
              tipo: 'selecao',
              opcoes: tipos,
              obrigatorio: true,
              aoMudar: setTipo,
            },
            {
              nome: 'versao_do_esquema',
              rotulo: 'Versão do esquema',
              tipo: 'selecao',
              opcoes: versoes,
              obrigatorio: true,
              aoMudar: setVersao,
            },
            { nome: 'entidade_id', rotulo: 'entidade_id', obrigatorio: true, ajuda: 'até 200 caracteres' },
            { nome: 'dados', rotulo: 'dados (JSON)', tipo: 'json', obrigatorio: true, inicial: '{}' },
            { nome: 'ocorrido_em', rotulo: 'Ocorrido em', tipo: 'data', ajuda: 'vazio: a hora do recebimento' },
          ]}
          enviar={(corpo) =>
            api<{ id: string }>('POST', '/evento', {
              ...corpo,
              ...(corpo.versao_do_esquema !== undefined ? { versao_do_esquema: Number(corpo.versao_do_esquema) } : {}),
            })
          }
          aoConcluir={(r) => navegar(`/eventos/${(r as { id: string }).id}`)}
        />
        <section aria-label="Esquema da versão">
          <h2>Esquema da versão</h2>
          {nome && versao ? (
            <Estado carga={esquema}>{(e) => <Json valor={e} rotulo="JSON Schema da versão" />}</Estado>
          ) : (
            <p class="estado vazio">Escolha o tipo e a versão para ver o esquema.</p>
          )}
        </section>
      </div>
    </>
  );
}

interface EventoRecusado {
  id: string;
  codigo: string;
  status_http: number;
  detalhe: string;
  erros: { caminho: string; mensagem: string }[];
  corpo: string | null;
  corpo_truncado: boolean;
  tipo_de_evento_id: string | null;
  versao_do_esquema: number | null;
  aplicativo_id: string | null;
  client_id: string | null;
  publicado_pelo_email: string | null;
  recebido_em: string;
}

export function TelaRecusados() {
  const tipos = useTipos();
  const aplicativos = useAplicativos();
  return (
    <>
      <Titulo>Eventos recusados</Titulo>
      <Lista<EventoRecusado>
        legenda="Eventos recusados"
        caminho="/evento-recusado"
        caminhoFiltro="/evento-recusado/filtro"
        textoVazio="Nenhum evento recusado."
        filtros={[
          { nome: 'codigo', rotulo: 'codigo' },
          { nome: 'aplicativo_id', rotulo: 'Aplicativo', tipo: 'selecao', opcoes: aplicativos },
          { nome: 'tipo_de_evento_id', rotulo: 'Tipo de evento', tipo: 'selecao', opcoes: tipos },
          { nome: 'desde', rotulo: 'Desde', tipo: 'data' },
          { nome: 'ate', rotulo: 'Até', tipo: 'data' },
        ]}
        colunas={[
          {
            rotulo: 'Recebido em',
            valor: (e) => <Link para={`/eventos-recusados/${e.id}`}>{data(e.recebido_em)}</Link>,
          },
          { rotulo: 'codigo', valor: (e) => e.codigo },
          { rotulo: 'Status', valor: (e) => e.status_http },
          { rotulo: 'Motivo', valor: (e) => e.detalhe },
          { rotulo: 'Quem enviou', valor: (e) => e.publicado_pelo_email ?? e.client_id ?? '—' },
        ]}
      />
    </>
  );
}

export function TelaRecusado(props: { id: string }) {
  const carga = useCarga(() => api<EventoRecusado>('GET', `/evento-recusado/${props.id}`), props.id);
  return (
    <>
      <Titulo>Evento recusado</Titulo>
      <Estado carga={carga}>
        {(e) => (
          <>
            <dl class="detalhe">
              <dt>codigo</dt>
              <dd>{e.codigo}</dd>
              <dt>Status</dt>
              <dd>{e.status_http}</dd>
              <dt>Motivo</dt>
              <dd>{e.detalhe}</dd>
              <dt>Quem enviou</dt>
              <dd>{e.publicado_pelo_email ?? e.client_id ?? '—'}</dd>
              <dt>Recebido em</dt>
              <dd>{data(e.recebido_em)}</dd>
            </dl>
            <h2>erros</h2>
            {e.erros.length ? (
              <ul>
                {e.erros.map((x) => (
                  <li key={x.caminho + x.mensagem}>
                    <code>{x.caminho || '/'}</code>: {x.mensagem}
                  </li>
                ))}
              </ul>
            ) : (
              <p class="estado vazio">Sem erros de campo.</p>
            )}
            <h2>Corpo recebido{e.corpo_truncado ? ' (truncado)' : ''}</h2>
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a long body scrolls; the keyboard must reach it */}
            <pre class="json" tabIndex={0}>
              {e.corpo ?? '—'}
            </pre>
          </>
        )}
      </Estado>
    </>
  );
}

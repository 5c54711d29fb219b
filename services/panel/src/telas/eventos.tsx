import { useState } from 'preact/hooks';
import { type Corpo, cliente, dados, type ItemDe } from '../api';
import { useCarga } from '../carga';
import { ErrosDeValidacao, Formulario } from '../formulario';
import { Lista } from '../lista';
import { useAplicativos, useOpcoes, useTipos } from '../opcoes';
import { Link, navegar } from '../rota';
import { type Coluna, data, Estado, Json, Tabela, Titulo } from '../ui';
import { colunasDeEntrega } from './entregas';

const colunas: Coluna<ItemDe<'/evento'>>[] = [
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
      <Lista
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
  const carga = useCarga(
    () => dados(cliente.GET('/evento/{id}', { params: { path: { id: props.id } } })),
    props.id,
    3000,
  );
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

/** POST /evento's body as the form makes it: the version comes from a select, as text. */
type Publicacao = Omit<Corpo<'/evento', 'post'>, 'versao_do_esquema'> & { versao_do_esquema: string };

export function TelaPublicar() {
  const tipos = useTipos();
  const [tipo, setTipo] = useState('');
  const [versao, setVersao] = useState('');
  const versoes = useOpcoes(tipo ? '/versao-de-esquema/autocomplete' : undefined, (v) => `versão ${v.versao}`, {
    valor: (v) => String(v.versao),
    query: { tipo_de_evento_id: tipo },
  });
  const nome = tipos.find((t) => t.valor === tipo)?.rotulo;
  const esquema = useCarga(
    () =>
      nome && versao
        ? dados(
            cliente.GET('/esquema/{tipo_de_evento_nome}/{versao}', {
              params: { path: { tipo_de_evento_nome: nome, versao } },
            }),
          )
        : Promise.resolve(undefined),
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
          enviar={({ versao_do_esquema, ...corpo }: Publicacao) =>
            dados(cliente.POST('/evento', { body: { ...corpo, versao_do_esquema: Number(versao_do_esquema) } }))
          }
          aoConcluir={(evento) => navegar(`/eventos/${evento.id}`)}
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

export function TelaRecusados() {
  const tipos = useTipos();
  const aplicativos = useAplicativos();
  return (
    <>
      <Titulo>Eventos recusados</Titulo>
      <Lista
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
  const carga = useCarga(
    () => dados(cliente.GET('/evento-recusado/{id}', { params: { path: { id: props.id } } })),
    props.id,
  );
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
            {e.erros.length ? <ErrosDeValidacao erros={e.erros} /> : <p class="estado vazio">Sem erros de campo.</p>}
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

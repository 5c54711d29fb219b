import type { Corpo, ItemDe } from '../api';
import { dados } from '../api';
import { useCarga } from '../carga';
import { Formulario } from '../formulario';
import { useVersao } from '../lista';
import { EscolherNaLinha } from '../telas/escolha';
import { ResumoDoFiltro, TestarFiltro } from '../telas/filtro';
import { AlternarAtivo, Acao, type Coluna, Estado, Paginacao, simNao, Tabela, Titulo } from '../ui';
import { EditarNaLinha, filtroDoTexto } from './edicao';
import { Reproduzir } from './reproduzir';
import { Saude } from './saude';
import { portal } from './sessao';
import { lerTipos } from './tipos';
import { useState } from 'preact/hooks';

const FORMATOS = ['standard-webhooks', 'cloudevents'] as const;
type Assinatura = ItemDe<'/assinaturas'>;
type Mudanca = Corpo<'/assinaturas/{id}', 'patch'>;

const nomeDe = (a: Assinatura) => `${a.tipo_de_evento_nome} v${a.versao_do_esquema}`;

/** The application's subscriptions: a new one (with the filter's test box), and each one's editors, health and replay. */
export function AbaAssinaturas() {
  const [versao, recarregar] = useVersao();
  const [filtro, setFiltro] = useState('');
  const tipos = useCarga(lerTipos, 'tipos');
  const opcoes = (tipos.dados ?? []).map((t) => ({ valor: t.id, rotulo: t.nome }));
  return (
    <>
      <Titulo>Assinaturas</Titulo>
      <Formulario
        titulo="Nova assinatura"
        campos={[
          { nome: 'tipo_de_evento_id', rotulo: 'Tipo de evento', tipo: 'selecao', opcoes, obrigatorio: true },
          { nome: 'versao_do_esquema', rotulo: 'versao_do_esquema', tipo: 'numero', obrigatorio: true, inicial: '1' },
          { nome: 'url_de_destino', rotulo: 'url_de_destino', obrigatorio: true, ajuda: 'https://…' },
          {
            nome: 'filtro',
            rotulo: 'filtro (JSON)',
            tipo: 'json',
            ajuda: 'opcional; vazio: todos os eventos. Ex.: {"dados.total_centavos": {"$gte": 10000}}',
            aoMudar: setFiltro,
          },
          { nome: 'entrega_ordenada', rotulo: 'entrega_ordenada', tipo: 'booleano' },
          {
            nome: 'formato',
            rotulo: 'formato',
            tipo: 'selecao',
            opcoes: FORMATOS.map((f) => ({ valor: f, rotulo: f })),
            inicial: 'standard-webhooks',
          },
        ]}
        enviar={(corpo: Corpo<'/assinaturas', 'post'>) => dados(portal.POST('/assinaturas', { body: corpo }))}
        aoConcluir={() => {
          setFiltro('');
          recarregar();
        }}
      />
      <TestarFiltro filtro={filtro} testar={(body) => dados(portal.POST('/assinaturas/testar-filtro', { body }))} />
      <ListaDeAssinaturas versao={versao} recarregar={recarregar} />
    </>
  );
}

function ListaDeAssinaturas(props: { versao: number; recarregar: () => void }) {
  const [pagina, setPagina] = useState(1);
  const carga = useCarga(
    () => dados(portal.GET('/assinaturas', { params: { query: { pagina, tamanho: 20 } } })),
    `${pagina}|${props.versao}`,
  );
  const mudar = (a: Assinatura, body: Mudanca) =>
    dados(portal.PATCH('/assinaturas/{id}', { params: { path: { id: a.id } }, body }));
  const { recarregar } = props;
  return (
    <Estado carga={carga} vazio={(p) => p.itens.length === 0} textoVazio="Nenhuma assinatura ainda.">
      {(p) => (
        <>
          <Tabela legenda="Assinaturas" itens={p.itens} colunas={colunas(mudar, recarregar, props.versao)} />
          <Paginacao pagina={p.pagina} tamanho={p.tamanho} total={p.total} ir={setPagina} />
        </>
      )}
    </Estado>
  );
}

/** A subscription's row: its editors, its health and its actions. */
function colunas(
  mudar: (a: Assinatura, body: Mudanca) => Promise<unknown>,
  recarregar: () => void,
  versao: number,
): Coluna<Assinatura>[] {
  return [
    { rotulo: 'Tipo', valor: nomeDe },
    {
      rotulo: 'url_de_destino',
      valor: (a) => (
        <EditarNaLinha
          rotulo={`URL da assinatura de ${nomeDe(a)}`}
          valor={a.url_de_destino}
          mostrar={(url) => <code class="quebra">{url}</code>}
          salvar={(url_de_destino) => mudar(a, { url_de_destino })}
          depois={recarregar}
        />
      ),
    },
    {
      rotulo: 'filtro',
      valor: (a) => (
        <EditarNaLinha
          rotulo={`filtro da assinatura de ${nomeDe(a)}`}
          valor={a.filtro === null ? '' : JSON.stringify(a.filtro)}
          mostrar={() => <ResumoDoFiltro filtro={a.filtro} />}
          salvar={(texto) => mudar(a, { filtro: filtroDoTexto(texto) as Mudanca['filtro'] })}
          depois={recarregar}
          multilinha
        />
      ),
    },
    {
      rotulo: 'entrega_ordenada',
      valor: (a) => (
        <EscolherNaLinha
          rotulo={`entrega ordenada da assinatura de ${nomeDe(a)}`}
          valor={simNao(a.entrega_ordenada)}
          opcoes={['sim', 'não']}
          editavel
          mudar={(v) => mudar(a, { entrega_ordenada: v === 'sim' })}
          depois={recarregar}
        />
      ),
    },
    {
      rotulo: 'formato',
      valor: (a) => (
        <EscolherNaLinha
          rotulo={`formato da assinatura de ${nomeDe(a)}`}
          valor={a.formato}
          opcoes={FORMATOS}
          editavel
          mudar={(formato) => mudar(a, { formato: formato as (typeof FORMATOS)[number] })}
          depois={recarregar}
        />
      ),
    },
    { rotulo: 'ativa', valor: (a) => simNao(a.ativa) },
    { rotulo: 'Saúde', valor: (a) => <Saude assinaturaId={a.id} versao={versao} /> },
    { rotulo: 'Ações', valor: (a) => <AcoesDaAssinatura assinatura={a} mudar={mudar} depois={recarregar} /> },
  ];
}

/** Switch it off or on, replay its past events, delete it. */
function AcoesDaAssinatura(props: {
  assinatura: Assinatura;
  mudar: (a: Assinatura, body: Mudanca) => Promise<unknown>;
  depois: () => void;
}) {
  const a = props.assinatura;
  return (
    <>
      <AlternarAtivo
        ativo={a.ativa}
        nome={`a assinatura de ${nomeDe(a)}`}
        alternar={(ativa) => props.mudar(a, { ativa })}
        depois={props.depois}
      />{' '}
      <Reproduzir cliente={portal} assinaturaId={a.id} nome={nomeDe(a)} />{' '}
      <Acao
        rotulo="Excluir"
        rotuloAcessivel={`Excluir a assinatura de ${nomeDe(a)}`}
        perigo
        confirmar="A assinatura deixa de receber eventos; as entregas em espera são canceladas."
        fazer={() => dados(portal.DELETE('/assinaturas/{id}', { params: { path: { id: a.id } } }))}
        depois={props.depois}
      />
    </>
  );
}

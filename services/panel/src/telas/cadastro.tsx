import { useState } from 'preact/hooks';
import { type Corpo, cliente, dados, type Permite } from '../api';
import { useCarga } from '../carga';
import { Formulario } from '../formulario';
import { Lista, useVersao } from '../lista';
import { useAplicativos, useTipos } from '../opcoes';
import { AlternarAtivo, data, Estado, simNao, Tabela, Titulo } from '../ui';
import { Link } from '../rota';
import { EscolherNaLinha } from './escolha';
import { ResumoDoFiltro, TestarFiltro } from './filtro';
import { AlteradaPor, LinkDoPortal } from './portal-link';

const COMPATIBILIDADES = ['none', 'backward', 'forward', 'full'] as const;
const FORMATOS = ['standard-webhooks', 'cloudevents'] as const;

export function TelaAplicativos(props: { permite: Permite }) {
  const [versao, recarregar] = useVersao();
  return (
    <>
      <Titulo>Aplicativos</Titulo>
      {props.permite.criar && (
        <Formulario
          titulo="Novo aplicativo"
          campos={[
            { nome: 'nome', rotulo: 'nome', obrigatorio: true },
            { nome: 'client_id', rotulo: 'client_id', obrigatorio: true, ajuda: 'o sub dos tokens do aplicativo' },
          ]}
          enviar={(corpo: Corpo<'/aplicativo', 'post'>) => dados(cliente.POST('/aplicativo', { body: corpo }))}
          aoConcluir={recarregar}
        />
      )}
      <Lista
        legenda="Aplicativos"
        caminho="/aplicativo"
        versao={versao}
        textoVazio="Nenhum aplicativo cadastrado."
        colunas={[
          { rotulo: 'nome', valor: (a) => a.nome },
          { rotulo: 'client_id', valor: (a) => a.client_id },
          { rotulo: 'ativo', valor: (a) => simNao(a.ativo) },
          { rotulo: 'Criado em', valor: (a) => data(a.criado_em) },
          {
            rotulo: 'Ações',
            valor: (a) =>
              props.permite.editar && (
                <>
                  <AlternarAtivo
                    ativo={a.ativo}
                    nome={a.nome}
                    alternar={(ativo) =>
                      dados(cliente.PATCH('/aplicativo/{id}', { params: { path: { id: a.id } }, body: { ativo } }))
                    }
                    depois={recarregar}
                  />{' '}
                  <LinkDoPortal aplicativo={a} />
                </>
              ),
          },
        ]}
      />
    </>
  );
}

export function TelaTipos(props: { permite: Permite }) {
  const [versao, recarregar] = useVersao();
  const aplicativos = useAplicativos();
  return (
    <>
      <Titulo>Tipos de evento</Titulo>
      {props.permite.criar && (
        <Formulario
          titulo="Novo tipo de evento"
          campos={[
            { nome: 'nome', rotulo: 'nome', obrigatorio: true, ajuda: 'por exemplo pedido.criado' },
            { nome: 'descricao', rotulo: 'descricao' },
            {
              nome: 'aplicativo_id',
              rotulo: 'Aplicativo (o publicador)',
              tipo: 'selecao',
              opcoes: aplicativos,
              obrigatorio: true,
            },
            { nome: 'retencao_em_dias', rotulo: 'retencao_em_dias', tipo: 'numero' },
            {
              nome: 'compatibilidade',
              rotulo: 'compatibilidade',
              tipo: 'selecao',
              opcoes: COMPATIBILIDADES.map((c) => ({ valor: c, rotulo: c })),
              inicial: 'none',
              ajuda: 'a regra com que cada nova versão do esquema é conferida contra a anterior',
            },
          ]}
          enviar={(corpo: Corpo<'/tipo-de-evento', 'post'>) => dados(cliente.POST('/tipo-de-evento', { body: corpo }))}
          aoConcluir={recarregar}
        />
      )}
      <Lista
        legenda="Tipos de evento"
        caminho="/tipo-de-evento"
        versao={versao}
        textoVazio="Nenhum tipo de evento cadastrado."
        colunas={[
          { rotulo: 'nome', valor: (t) => t.nome },
          { rotulo: 'descricao', valor: (t) => t.descricao ?? '—' },
          { rotulo: 'Publicador', valor: (t) => t.aplicativo_nome },
          { rotulo: 'Retenção (dias)', valor: (t) => t.retencao_em_dias },
          {
            rotulo: 'compatibilidade',
            valor: (t) => (
              <EscolherNaLinha
                rotulo={`compatibilidade de ${t.nome}`}
                valor={t.compatibilidade}
                opcoes={COMPATIBILIDADES}
                editavel={props.permite.editar}
                mudar={(compatibilidade) =>
                  dados(
                    cliente.PATCH('/tipo-de-evento/{id}', {
                      params: { path: { id: t.id } },
                      body: { compatibilidade: compatibilidade as (typeof COMPATIBILIDADES)[number] },
                    }),
                  )
                }
                depois={recarregar}
              />
            ),
          },
          { rotulo: 'ativo', valor: (t) => simNao(t.ativo) },
          {
            rotulo: 'Ações',
            valor: (t) =>
              props.permite.editar && (
                <AlternarAtivo
                  ativo={t.ativo}
                  nome={t.nome}
                  alternar={(ativo) =>
                    dados(cliente.PATCH('/tipo-de-evento/{id}', { params: { path: { id: t.id } }, body: { ativo } }))
                  }
                  depois={recarregar}
                />
              ),
          },
        ]}
      />
    </>
  );
}

export function TelaAssinaturas(props: { permite: Permite }) {
  const [versao, recarregar] = useVersao();
  const aplicativos = useAplicativos();
  const tipos = useTipos();
  // The filter being typed in the form, for the test box below it.
  const [filtro, setFiltro] = useState('');
  return (
    <>
      <Titulo>Assinaturas</Titulo>
      {props.permite.criar && (
        <Formulario
          titulo="Nova assinatura"
          campos={[
            {
              nome: 'aplicativo_assinante_id',
              rotulo: 'Aplicativo assinante',
              tipo: 'selecao',
              opcoes: aplicativos,
              obrigatorio: true,
            },
            { nome: 'tipo_de_evento_id', rotulo: 'Tipo de evento', tipo: 'selecao', opcoes: tipos, obrigatorio: true },
            { nome: 'versao_do_esquema', rotulo: 'versao_do_esquema', tipo: 'numero', obrigatorio: true, inicial: '1' },
            { nome: 'url_de_destino', rotulo: 'url_de_destino', obrigatorio: true, ajuda: 'https://…' },
            { nome: 'maximo_de_tentativas', rotulo: 'maximo_de_tentativas', tipo: 'numero' },
            {
              nome: 'filtro',
              rotulo: 'filtro (JSON)',
              tipo: 'json',
              ajuda: 'opcional; vazio: todos os eventos. Ex.: {"dados.cliente.uf": {"$in": ["SP", "RJ"]}}',
              aoMudar: setFiltro,
            },
            {
              nome: 'entrega_ordenada',
              rotulo: 'entrega_ordenada',
              tipo: 'booleano',
              ajuda: 'uma entrega de cada entidade_id por vez, na ordem em que os eventos foram aceitos',
            },
            {
              nome: 'formato',
              rotulo: 'formato',
              tipo: 'selecao',
              opcoes: FORMATOS.map((f) => ({ valor: f, rotulo: f })),
              inicial: 'standard-webhooks',
              ajuda: 'cloudevents: o corpo CloudEvents 1.0 (application/cloudevents+json), com a mesma assinatura',
            },
          ]}
          enviar={(corpo: Corpo<'/assinatura', 'post'>) => dados(cliente.POST('/assinatura', { body: corpo }))}
          aoConcluir={() => {
            setFiltro('');
            recarregar();
          }}
        />
      )}
      {props.permite.criar && <TestarFiltro filtro={filtro} />}
      <Lista
        legenda="Assinaturas"
        caminho="/assinatura"
        versao={versao}
        textoVazio="Nenhuma assinatura."
        colunas={[
          { rotulo: 'Assinante', valor: (a) => a.aplicativo_assinante_nome },
          { rotulo: 'Tipo', valor: (a) => `${a.tipo_de_evento_nome} v${a.versao_do_esquema}` },
          { rotulo: 'url_de_destino', valor: (a) => a.url_de_destino },
          { rotulo: 'Máx. tentativas', valor: (a) => a.maximo_de_tentativas },
          { rotulo: 'filtro', valor: (a) => <ResumoDoFiltro filtro={a.filtro} /> },
          { rotulo: 'entrega_ordenada', valor: (a) => simNao(a.entrega_ordenada) },
          {
            rotulo: 'formato',
            valor: (a) => (
              <EscolherNaLinha
                rotulo={`formato da assinatura de ${a.aplicativo_assinante_nome}`}
                valor={a.formato}
                opcoes={FORMATOS}
                editavel={props.permite.editar}
                mudar={(formato) =>
                  dados(
                    cliente.PATCH('/assinatura/{id}', {
                      params: { path: { id: a.id } },
                      body: { formato: formato as (typeof FORMATOS)[number] },
                    }),
                  )
                }
                depois={recarregar}
              />
            ),
          },
          { rotulo: 'ativa', valor: (a) => simNao(a.ativa) },
          { rotulo: 'Alterada por', valor: (a) => <AlteradaPor assinatura={a} /> },
          {
            rotulo: 'Ações',
            valor: (a) => (
              <>
                {props.permite.editar && (
                  <AlternarAtivo
                    ativo={a.ativa}
                    nome={`a assinatura de ${a.aplicativo_assinante_nome}`}
                    alternar={(ativa) =>
                      dados(cliente.PATCH('/assinatura/{id}', { params: { path: { id: a.id } }, body: { ativa } }))
                    }
                    depois={recarregar}
                  />
                )}
                {props.permite.criar && a.ativa && <Link para={`/assinaturas/${a.id}/reproduzir`}>Reproduzir</Link>}
              </>
            ),
          },
        ]}
      />
    </>
  );
}

export function TelaChaves() {
  const carga = useCarga(() => dados(cliente.GET('/.well-known/jwks.json')), 'jwks');
  return (
    <>
      <Titulo>Chaves de assinatura</Titulo>
      <p class="nota">As chaves públicas com que os assinantes verificam as entregas (GET /.well-known/jwks.json).</p>
      <Estado carga={carga} vazio={(j) => j.keys.length === 0} textoVazio="Nenhuma chave publicada.">
        {(j) => (
          <Tabela
            legenda="Chaves de assinatura"
            chave={(k) => k.kid}
            itens={j.keys}
            colunas={[
              { rotulo: 'kid', valor: (k) => <code>{k.kid}</code> },
              { rotulo: 'alg', valor: (k) => k.alg },
              { rotulo: 'crv', valor: (k) => k.crv },
              { rotulo: 'use', valor: (k) => k.use },
              { rotulo: 'x', valor: (k) => <code class="quebra">{k.x}</code> },
            ]}
          />
        )}
      </Estado>
    </>
  );
}

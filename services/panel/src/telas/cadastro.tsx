import { useState } from 'preact/hooks';
import { api } from '../api';
import { useCarga } from '../carga';
import { Lista } from '../lista';
import { useAplicativos, useTipos } from '../opcoes';
import { Link, navegar } from '../rota';
import { Acao, Aviso, data, Estado, Formulario, Json, simNao, Tabela, Titulo } from '../ui';

export interface Permite {
  criar: boolean;
  editar: boolean;
  deletar: boolean;
}

const useVersao = () => {
  const [versao, setVersao] = useState(0);
  return [versao, () => setVersao((v) => v + 1)] as const;
};

interface Aplicativo {
  id: string;
  nome: string;
  client_id: string;
  ativo: boolean;
  criado_em: string;
}

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
          enviar={(corpo) => api('POST', '/aplicativo', corpo)}
          aoConcluir={recarregar}
        />
      )}
      <Lista<Aplicativo>
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
                <Acao
                  rotulo={a.ativo ? 'Desativar' : 'Ativar'}
                  rotuloAcessivel={`${a.ativo ? 'Desativar' : 'Ativar'} ${a.nome}`}
                  fazer={() => api('PATCH', `/aplicativo/${a.id}`, { ativo: !a.ativo })}
                  depois={recarregar}
                />
              ),
          },
        ]}
      />
    </>
  );
}

interface Tipo {
  id: string;
  nome: string;
  descricao: string | null;
  aplicativo_nome: string;
  ativo: boolean;
  retencao_em_dias: number;
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
          ]}
          enviar={(corpo) => api('POST', '/tipo-de-evento', corpo)}
          aoConcluir={recarregar}
        />
      )}
      <Lista<Tipo>
        legenda="Tipos de evento"
        caminho="/tipo-de-evento"
        versao={versao}
        textoVazio="Nenhum tipo de evento cadastrado."
        colunas={[
          { rotulo: 'nome', valor: (t) => t.nome },
          { rotulo: 'descricao', valor: (t) => t.descricao ?? '—' },
          { rotulo: 'Publicador', valor: (t) => t.aplicativo_nome },
          { rotulo: 'Retenção (dias)', valor: (t) => t.retencao_em_dias },
          { rotulo: 'ativo', valor: (t) => simNao(t.ativo) },
          {
            rotulo: 'Ações',
            valor: (t) =>
              props.permite.editar && (
                <Acao
                  rotulo={t.ativo ? 'Desativar' : 'Ativar'}
                  rotuloAcessivel={`${t.ativo ? 'Desativar' : 'Ativar'} ${t.nome}`}
                  fazer={() => api('PATCH', `/tipo-de-evento/${t.id}`, { ativo: !t.ativo })}
                  depois={recarregar}
                />
              ),
          },
        ]}
      />
    </>
  );
}

interface Versao {
  id: string;
  tipo_de_evento_id: string;
  tipo_de_evento_nome: string;
  versao: number;
  esquema: Record<string, unknown>;
  ativa: boolean;
  descricao: string | null;
  criado_em: string;
}

const EXEMPLO = JSON.stringify(
  { type: 'object', required: ['id'], properties: { id: { type: 'string' } }, additionalProperties: true },
  null,
  2,
);

export function TelaVersoes(props: { permite: Permite }) {
  const [versao, recarregar] = useVersao();
  const tipos = useTipos();
  return (
    <>
      <Titulo>Versões de esquema</Titulo>
      {props.permite.criar && (
        <Formulario
          titulo="Nova versão de esquema"
          campos={[
            { nome: 'tipo_de_evento_id', rotulo: 'Tipo de evento', tipo: 'selecao', opcoes: tipos, obrigatorio: true },
            { nome: 'esquema', rotulo: 'esquema (JSON Schema)', tipo: 'json', obrigatorio: true, inicial: EXEMPLO },
            { nome: 'descricao', rotulo: 'descricao' },
          ]}
          enviar={(corpo) => api<Versao>('POST', '/versao-de-esquema', corpo)}
          aoConcluir={(r) => {
            recarregar();
            navegar(`/versoes/${(r as Versao).id}`);
          }}
        />
      )}
      <Lista<Versao>
        legenda="Versões de esquema"
        caminho="/versao-de-esquema"
        versao={versao}
        textoVazio="Nenhuma versão de esquema."
        filtros={[{ nome: 'tipo_de_evento_id', rotulo: 'Tipo de evento', tipo: 'selecao', opcoes: tipos }]}
        colunas={[
          {
            rotulo: 'Tipo',
            valor: (v) => <Link para={`/versoes/${v.id}`}>{`${v.tipo_de_evento_nome} v${v.versao}`}</Link>,
          },
          { rotulo: 'descricao', valor: (v) => v.descricao ?? '—' },
          { rotulo: 'ativa', valor: (v) => simNao(v.ativa) },
          { rotulo: 'Criada em', valor: (v) => data(v.criado_em) },
        ]}
      />
    </>
  );
}

interface Validacao {
  valido: boolean;
  erros: { caminho: string; mensagem: string }[];
}

export function TelaVersao(props: { id: string; permite: Permite }) {
  const carga = useCarga(() => api<Versao>('GET', `/versao-de-esquema/${props.id}`), props.id);
  const [dados, setDados] = useState('{}');
  const [resultado, setResultado] = useState<Validacao | string>();
  return (
    <>
      <Titulo>Versão de esquema</Titulo>
      <Estado carga={carga}>
        {(v) => (
          <>
            <dl class="detalhe">
              <dt>Tipo</dt>
              <dd>{v.tipo_de_evento_nome}</dd>
              <dt>versao</dt>
              <dd>{v.versao}</dd>
              <dt>ativa</dt>
              <dd>
                {simNao(v.ativa)}{' '}
                {props.permite.editar && (
                  <Acao
                    rotulo={v.ativa ? 'Desligar' : 'Ligar'}
                    fazer={() => api('PATCH', `/versao-de-esquema/${v.id}`, { ativa: !v.ativa })}
                    depois={carga.recarregar}
                  />
                )}
              </dd>
              <dt>descricao</dt>
              <dd>{v.descricao ?? '—'}</dd>
            </dl>
            <div class="duas-colunas">
              <section aria-label="Esquema">
                <h2>esquema</h2>
                <Json valor={v.esquema} rotulo="JSON Schema da versão" />
              </section>
              <section aria-label="Validar dados">
                <h2>Validar dados</h2>
                <form
                  class="formulario"
                  onSubmit={async (e) => {
                    e.preventDefault();
                    let valor: unknown;
                    try {
                      valor = JSON.parse(dados);
                    } catch (error) {
                      setResultado(`JSON inválido: ${(error as Error).message}`);
                      return;
                    }
                    try {
                      setResultado(
                        await api<Validacao>('POST', `/versao-de-esquema/${v.id}/validar`, { dados: valor }),
                      );
                    } catch (error) {
                      setResultado(error instanceof Error && 'texto' in error ? String(error.texto) : String(error));
                    }
                  }}
                >
                  <div class="campo">
                    <label for="validar-dados">dados (JSON)</label>
                    <textarea
                      id="validar-dados"
                      rows={8}
                      spellcheck={false}
                      value={dados}
                      onInput={(e) => setDados(e.currentTarget.value)}
                    />
                  </div>
                  <button type="submit">Validar</button>
                </form>
                {typeof resultado === 'string' && <Aviso erro={resultado} />}
                {typeof resultado === 'object' &&
                  (resultado.valido ? (
                    <p class="estado ok" role="status">
                      Válido.
                    </p>
                  ) : (
                    <div role="status">
                      <p class="estado erro">Inválido:</p>
                      <ul>
                        {resultado.erros.map((x) => (
                          <li key={x.caminho + x.mensagem}>
                            <code>{x.caminho || '/'}</code>: {x.mensagem}
                          </li>
                        ))}
                      </ul>
                    </div>
                  ))}
              </section>
            </div>
          </>
        )}
      </Estado>
    </>
  );
}

interface Assinatura {
  id: string;
  aplicativo_assinante_nome: string;
  tipo_de_evento_nome: string;
  versao_do_esquema: number;
  url_de_destino: string;
  maximo_de_tentativas: number;
  ativa: boolean;
}

export function TelaAssinaturas(props: { permite: Permite }) {
  const [versao, recarregar] = useVersao();
  const aplicativos = useAplicativos();
  const tipos = useTipos();
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
          ]}
          enviar={(corpo) => api('POST', '/assinatura', corpo)}
          aoConcluir={recarregar}
        />
      )}
      <Lista<Assinatura>
        legenda="Assinaturas"
        caminho="/assinatura"
        versao={versao}
        textoVazio="Nenhuma assinatura."
        colunas={[
          { rotulo: 'Assinante', valor: (a) => a.aplicativo_assinante_nome },
          { rotulo: 'Tipo', valor: (a) => `${a.tipo_de_evento_nome} v${a.versao_do_esquema}` },
          { rotulo: 'url_de_destino', valor: (a) => a.url_de_destino },
          { rotulo: 'Máx. tentativas', valor: (a) => a.maximo_de_tentativas },
          { rotulo: 'ativa', valor: (a) => simNao(a.ativa) },
          {
            rotulo: 'Ações',
            valor: (a) =>
              props.permite.editar && (
                <Acao
                  rotulo={a.ativa ? 'Desativar' : 'Ativar'}
                  rotuloAcessivel={`${a.ativa ? 'Desativar' : 'Ativar'} a assinatura de ${a.aplicativo_assinante_nome}`}
                  fazer={() => api('PATCH', `/assinatura/${a.id}`, { ativa: !a.ativa })}
                  depois={recarregar}
                />
              ),
          },
        ]}
      />
    </>
  );
}

interface Jwk {
  kid: string;
  kty: string;
  crv: string;
  alg: string;
  use: string;
  x: string;
}

export function TelaChaves() {
  const carga = useCarga(() => api<{ keys: Jwk[] }>('GET', '/.well-known/jwks.json'), 'jwks');
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

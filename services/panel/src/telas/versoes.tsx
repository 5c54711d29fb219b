import { useState } from 'preact/hooks';
import { type Corpo, cliente, dados, ErroDaApi, type Permite, type Resposta } from '../api';
import { useCarga } from '../carga';
import { ErrosDeValidacao, Formulario } from '../formulario';
import { Lista, useVersao } from '../lista';
import { useTipos } from '../opcoes';
import { Link, navegar } from '../rota';
import { AlternarAtivo, Aviso, data, Estado, Json, simNao, Titulo } from '../ui';

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
          enviar={(corpo: Corpo<'/versao-de-esquema', 'post'>) =>
            dados(cliente.POST('/versao-de-esquema', { body: corpo }))
          }
          aoConcluir={(v) => {
            recarregar();
            navegar(`/versoes/${v.id}`);
          }}
        />
      )}
      <Lista
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

type Validacao = Resposta<'/versao-de-esquema/{id}/validar', 'post'>;

/** The playground of POST /versao-de-esquema/{id}/validar: the validator's answer, or why there is none. */
function ValidarDados(props: { versaoId: string }) {
  const [texto, setTexto] = useState('{}');
  const [resultado, setResultado] = useState<Validacao | string>();
  const validar = async (e: Event) => {
    e.preventDefault();
    let valor: unknown;
    try {
      valor = JSON.parse(texto);
    } catch (error) {
      setResultado(`JSON inválido: ${(error as Error).message}`);
      return;
    }
    try {
      setResultado(
        await dados(
          cliente.POST('/versao-de-esquema/{id}/validar', {
            params: { path: { id: props.versaoId } },
            body: { dados: valor },
          }),
        ),
      );
    } catch (error) {
      setResultado(error instanceof ErroDaApi ? error.texto : String(error));
    }
  };
  return (
    <section aria-label="Validar dados">
      <h2>Validar dados</h2>
      <form class="formulario" onSubmit={validar}>
        <div class="campo">
          <label for="validar-dados">dados (JSON)</label>
          <textarea
            id="validar-dados"
            rows={8}
            spellcheck={false}
            value={texto}
            onInput={(e) => setTexto(e.currentTarget.value)}
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
            <ErrosDeValidacao erros={resultado.erros} />
          </div>
        ))}
    </section>
  );
}

export function TelaVersao(props: { id: string; permite: Permite }) {
  const carga = useCarga(
    () => dados(cliente.GET('/versao-de-esquema/{id}', { params: { path: { id: props.id } } })),
    props.id,
  );
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
                  <AlternarAtivo
                    ativo={v.ativa}
                    nome={`a versão ${v.versao} de ${v.tipo_de_evento_nome}`}
                    alternar={(ativa) =>
                      dados(
                        cliente.PATCH('/versao-de-esquema/{id}', { params: { path: { id: v.id } }, body: { ativa } }),
                      )
                    }
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
              <ValidarDados versaoId={v.id} />
            </div>
          </>
        )}
      </Estado>
    </>
  );
}

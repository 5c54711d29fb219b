import { useState } from 'preact/hooks';
import { type Acoes, type Area, type Corpo, cliente, dados, type ItemDe, type Permite } from '../api';
import { Formulario } from '../formulario';
import { Lista, useVersao } from '../lista';
import { type Opcao, useOpcoes } from '../opcoes';
import { Acao, AlternarAtivo, data, simNao, Titulo } from '../ui';

export function TelaAcessos(props: { permite: Permite }) {
  const [versao, recarregar] = useVersao();
  return (
    <>
      <Titulo>Acessos</Titulo>
      {props.permite.criar && (
        <Formulario
          titulo="Novo acesso"
          campos={[
            { nome: 'email', rotulo: 'email', tipo: 'email', obrigatorio: true, ajuda: 'do domínio da empresa' },
            {
              nome: 'perfil',
              rotulo: 'perfil',
              tipo: 'selecao',
              opcoes: [{ valor: 'colaborador', rotulo: 'colaborador' }],
              inicial: 'colaborador',
              obrigatorio: true,
            },
          ]}
          enviar={(corpo: Corpo<'/auth', 'post'>) => dados(cliente.POST('/auth', { body: corpo }))}
          aoConcluir={recarregar}
        />
      )}
      <Lista
        legenda="Acessos"
        caminho="/auth"
        versao={versao}
        textoVazio="Nenhum acesso."
        colunas={[
          { rotulo: 'email', valor: (a) => a.email },
          { rotulo: 'nome', valor: (a) => a.nome ?? '—' },
          { rotulo: 'perfil', valor: (a) => a.perfil },
          { rotulo: 'master', valor: (a) => simNao(a.master) },
          { rotulo: 'ativo', valor: (a) => simNao(a.ativo) },
          { rotulo: 'vinculado', valor: (a) => simNao(a.vinculado) },
          { rotulo: 'Último login', valor: (a) => data(a.ultimo_login_em) },
          {
            rotulo: 'Ações',
            valor: (a) =>
              !a.master && (
                <>
                  {props.permite.editar && (
                    <AlternarAtivo
                      ativo={a.ativo}
                      nome={a.email}
                      alternar={(ativo) =>
                        dados(cliente.PATCH('/auth/{id}', { params: { path: { id: a.id } }, body: { ativo } }))
                      }
                      depois={recarregar}
                    />
                  )}
                  {props.permite.deletar && !a.vinculado && (
                    <Acao
                      rotulo="Excluir"
                      perigo
                      rotuloAcessivel={`Excluir ${a.email}`}
                      fazer={() => dados(cliente.DELETE('/auth/{id}', { params: { path: { id: a.id } } }))}
                      depois={recarregar}
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

const AREAS: Area[] = ['aplicativos', 'colaboradores', 'configuracoes', 'monitoramento'];
const ACOES: (keyof Acoes)[] = ['ler', 'criar', 'editar', 'deletar'];
type Grade = Partial<Record<Area, Acoes>>;

/** The permission grid: one row per area, one checkbox per action. */
function GradeDePermissoes(props: { valor: Grade; mudar?: (g: Grade) => void; legenda: string }) {
  return (
    <div class="rolagem">
      <table class="grade">
        <caption>{props.legenda}</caption>
        <thead>
          <tr>
            <th scope="col">Área</th>
            {ACOES.map((a) => (
              <th scope="col" key={a}>
                {a}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {AREAS.map((area) => (
            <tr key={area}>
              <th scope="row">{area}</th>
              {ACOES.map((acao) => (
                <td key={acao}>
                  <input
                    type="checkbox"
                    aria-label={`${area}.${acao}`}
                    checked={props.valor[area]?.[acao] === true}
                    disabled={!props.mudar}
                    onChange={(e) =>
                      props.mudar?.({
                        ...props.valor,
                        [area]: { ...props.valor[area], [acao]: e.currentTarget.checked },
                      })
                    }
                  />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const resumoDe = (g: Grade) =>
  AREAS.flatMap((area) => ACOES.filter((acao) => g[area]?.[acao]).map((acao) => `${area}.${acao}`)).join(', ') ||
  'nenhuma';

export function TelaPerfis(props: { permite: Permite }) {
  const [versao, recarregar] = useVersao();
  const [grade, setGrade] = useState<Grade>({});
  return (
    <>
      <Titulo>Perfis de acesso</Titulo>
      {props.permite.criar && (
        <Formulario
          titulo="Novo perfil de acesso"
          campos={[{ nome: 'nome', rotulo: 'nome', obrigatorio: true }]}
          enviar={(corpo: Omit<Corpo<'/perfil-de-acesso', 'post'>, 'permissoes'>) =>
            dados(cliente.POST('/perfil-de-acesso', { body: { ...corpo, permissoes: grade } }))
          }
          aoConcluir={() => {
            setGrade({});
            recarregar();
          }}
          filhos={<GradeDePermissoes valor={grade} mudar={setGrade} legenda="Permissões do novo perfil" />}
        />
      )}
      <Lista
        legenda="Perfis de acesso"
        caminho="/perfil-de-acesso"
        versao={versao}
        textoVazio="Nenhum perfil de acesso."
        colunas={[
          { rotulo: 'nome', valor: (p) => p.nome },
          { rotulo: 'permissoes', valor: (p) => resumoDe(p.permissoes) },
          { rotulo: 'Criado em', valor: (p) => data(p.criado_em) },
          {
            rotulo: 'Ações',
            valor: (p) =>
              props.permite.deletar && (
                <Acao
                  rotulo="Excluir"
                  perigo
                  rotuloAcessivel={`Excluir o perfil ${p.nome}`}
                  fazer={() => dados(cliente.DELETE('/perfil-de-acesso/{id}', { params: { path: { id: p.id } } }))}
                  depois={recarregar}
                />
              ),
          },
        ]}
      />
    </>
  );
}

function EscolherPerfil(props: { colaborador: ItemDe<'/colaborador'>; perfis: Opcao[]; depois: () => void }) {
  const [perfil, setPerfil] = useState(props.colaborador.perfil_de_acesso_id ?? '');
  const id = `perfil-${props.colaborador.id}`;
  return (
    <span class="limites">
      <label for={id} class="invisivel">
        Perfil de acesso de {props.colaborador.email}
      </label>
      <select id={id} value={perfil} onChange={(e) => setPerfil(e.currentTarget.value)}>
        <option value="">nenhum</option>
        {props.perfis.map((p) => (
          <option key={p.valor} value={p.valor}>
            {p.rotulo}
          </option>
        ))}
      </select>
      <Acao
        rotulo="Salvar"
        rotuloAcessivel={`Salvar o perfil de ${props.colaborador.email}`}
        fazer={() =>
          dados(
            cliente.PATCH('/colaborador/{id}', {
              params: { path: { id: props.colaborador.id } },
              body: { perfil_de_acesso_id: perfil || null },
            }),
          )
        }
        depois={props.depois}
      />
    </span>
  );
}

export function TelaColaboradores(props: { permite: Permite }) {
  const [versao, recarregar] = useVersao();
  const perfis = useOpcoes('/perfil-de-acesso/autocomplete', (p) => p.nome);
  return (
    <>
      <Titulo>Colaboradores</Titulo>
      <Lista
        legenda="Colaboradores"
        caminho="/colaborador"
        versao={versao}
        textoVazio="Nenhum colaborador sincronizado pelo serviço de identidade."
        colunas={[
          { rotulo: 'email', valor: (c) => c.email },
          { rotulo: 'nome', valor: (c) => c.nome },
          { rotulo: 'ativo', valor: (c) => simNao(c.ativo) },
          { rotulo: 'vinculado', valor: (c) => simNao(c.vinculado) },
          {
            rotulo: 'Perfil de acesso',
            valor: (c) =>
              props.permite.editar ? (
                <EscolherPerfil colaborador={c} perfis={perfis} depois={recarregar} />
              ) : (
                (c.perfil_de_acesso_nome ?? 'nenhum')
              ),
          },
        ]}
      />
    </>
  );
}

export function TelaFuncoes() {
  const [versao, recarregar] = useVersao();
  return (
    <>
      <Titulo>Funções</Titulo>
      <Formulario
        titulo="Nova função"
        campos={[{ nome: 'nome', rotulo: 'nome', obrigatorio: true, ajuda: '1 a 120 caracteres, sem repetir' }]}
        enviar={(corpo: Corpo<'/funcao', 'post'>) => dados(cliente.POST('/funcao', { body: corpo }))}
        aoConcluir={recarregar}
      />
      <Lista
        legenda="Funções"
        caminho="/funcao"
        versao={versao}
        textoVazio="Nenhuma função."
        colunas={[
          { rotulo: 'nome', valor: (f) => f.nome },
          { rotulo: 'Colaboradores', valor: (f) => f.quantidade_de_colaboradores },
          { rotulo: 'Atualizada em', valor: (f) => data(f.atualizado_em) },
        ]}
      />
    </>
  );
}

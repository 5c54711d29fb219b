import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  type AcessoAtual,
  type Acoes,
  type Area,
  cliente,
  dados,
  ErroDaApi,
  type Permite,
  pode,
  quandoExpirar,
  sessao,
} from './api';
import { TelaEntrar } from './entrar';
import { casar, Link, useRota } from './rota';
import { TelaAcessos, TelaColaboradores, TelaFuncoes, TelaPerfis } from './telas/acessos';
import { TelaAplicativos, TelaAssinaturas, TelaChaves, TelaTipos } from './telas/cadastro';
import { TelaEntrega, TelaEntregas } from './telas/entregas';
import { TelaEvento, TelaEventos, TelaPublicar, TelaRecusado, TelaRecusados } from './telas/eventos';
import { TelaFilas } from './telas/filas';
import { TelaDestinos, TelaTentativas } from './telas/operacao';
import { TelaReprocessamento, TelaReprocessamentos } from './telas/reprocessamentos';
import { TelaReproducao, TelaReproducoes, TelaReproduzir } from './telas/reproducoes';
import { TelaResumo } from './telas/resumo';
import { TelaVersao, TelaVersoes } from './telas/versoes';
import { Aviso, Carregando } from './ui';

type Pode = (area: Area, acao?: keyof Acoes) => boolean;
interface Item {
  rotulo: string;
  para: string;
  ver: (p: Pode, acesso: AcessoAtual) => boolean;
}

const monitorar: Item['ver'] = (p) => p('monitoramento', 'ler');
/** The hub registry's menus are for who may change it; a reader still reaches its lists by address. */
const cadastrar: Item['ver'] = (p) => p('monitoramento', 'criar') || p('monitoramento', 'editar');

export const MENU: { grupo: string; itens: Item[] }[] = [
  {
    grupo: 'Monitoramento',
    itens: [
      { rotulo: 'Resumo', para: '/', ver: monitorar },
      { rotulo: 'Eventos', para: '/eventos', ver: monitorar },
      { rotulo: 'Eventos recusados', para: '/eventos-recusados', ver: monitorar },
      { rotulo: 'Entregas', para: '/entregas', ver: monitorar },
      { rotulo: 'Reprocessamentos', para: '/reprocessamentos', ver: monitorar },
      { rotulo: 'Reproduções', para: '/reproducoes', ver: monitorar },
    ],
  },
  {
    grupo: 'Operação',
    itens: [
      { rotulo: 'Filas', para: '/filas', ver: monitorar },
      { rotulo: 'Destinos', para: '/destinos', ver: monitorar },
      { rotulo: 'Tentativas', para: '/tentativas', ver: monitorar },
    ],
  },
  {
    grupo: 'Cadastro',
    itens: [
      { rotulo: 'Aplicativos', para: '/aplicativos', ver: cadastrar },
      { rotulo: 'Tipos de evento', para: '/tipos-de-evento', ver: cadastrar },
      { rotulo: 'Versões de esquema', para: '/versoes', ver: cadastrar },
      { rotulo: 'Assinaturas', para: '/assinaturas', ver: cadastrar },
      { rotulo: 'Chaves de assinatura', para: '/chaves', ver: cadastrar },
    ],
  },
  {
    grupo: 'Acessos',
    itens: [
      { rotulo: 'Acessos', para: '/acessos', ver: (p) => p('colaboradores') },
      { rotulo: 'Perfis de acesso', para: '/perfis', ver: (p) => p('configuracoes') },
      { rotulo: 'Colaboradores', para: '/colaboradores', ver: (p) => p('colaboradores') },
      { rotulo: 'Funções', para: '/funcoes', ver: (_p, a) => a.master },
    ],
  },
];

type Tela = (params: Record<string, string>, p: Pode) => JSX.Element;
const permite = (p: Pode, area: Area): Permite => ({
  criar: p(area, 'criar'),
  editar: p(area, 'editar'),
  deletar: p(area, 'deletar'),
});

const TELAS: [string, Tela][] = [
  ['/', () => <TelaResumo />],
  ['/eventos', (_, p) => <TelaEventos podeCriar={p('monitoramento', 'criar')} />],
  ['/eventos/publicar', () => <TelaPublicar />],
  ['/eventos/:id', ({ id = '' }) => <TelaEvento id={id} />],
  ['/eventos-recusados', () => <TelaRecusados />],
  ['/eventos-recusados/:id', ({ id = '' }) => <TelaRecusado id={id} />],
  [
    '/entregas',
    (_, p) => <TelaEntregas podeCriar={p('monitoramento', 'criar')} podeEditar={p('monitoramento', 'editar')} />,
  ],
  ['/entregas/:id', ({ id = '' }, p) => <TelaEntrega id={id} podeReenviar={p('monitoramento', 'editar')} />],
  ['/reprocessamentos', () => <TelaReprocessamentos />],
  ['/reprocessamentos/:id', ({ id = '' }) => <TelaReprocessamento id={id} />],
  ['/reproducoes', () => <TelaReproducoes />],
  ['/reproducoes/:id', ({ id = '' }, p) => <TelaReproducao id={id} podeCancelar={p('monitoramento', 'criar')} />],
  ['/assinaturas/:id/reproduzir', ({ id = '' }) => <TelaReproduzir assinaturaId={id} />],
  ['/filas', (_, p) => <TelaFilas podeEditar={p('monitoramento', 'editar')} />],
  ['/destinos', (_, p) => <TelaDestinos podeEditar={p('monitoramento', 'editar')} />],
  ['/tentativas', () => <TelaTentativas />],
  ['/aplicativos', (_, p) => <TelaAplicativos permite={permite(p, 'monitoramento')} />],
  ['/tipos-de-evento', (_, p) => <TelaTipos permite={permite(p, 'monitoramento')} />],
  ['/versoes', (_, p) => <TelaVersoes permite={permite(p, 'monitoramento')} />],
  ['/versoes/:id', ({ id = '' }, p) => <TelaVersao id={id} permite={permite(p, 'monitoramento')} />],
  ['/assinaturas', (_, p) => <TelaAssinaturas permite={permite(p, 'monitoramento')} />],
  ['/chaves', () => <TelaChaves />],
  ['/acessos', (_, p) => <TelaAcessos permite={permite(p, 'colaboradores')} />],
  ['/perfis', (_, p) => <TelaPerfis permite={permite(p, 'configuracoes')} />],
  ['/colaboradores', (_, p) => <TelaColaboradores permite={permite(p, 'colaboradores')} />],
  ['/funcoes', () => <TelaFuncoes />],
];

function Conteudo(props: { caminho: string; p: Pode }) {
  for (const [padrao, tela] of TELAS) {
    const params = casar(padrao, props.caminho);
    if (params) return tela(params, props.p);
  }
  return (
    <>
      <h1>Página não encontrada</h1>
      <p>
        <Link para="/">Voltar ao resumo</Link>
      </p>
    </>
  );
}

export function App() {
  const [acesso, setAcesso] = useState<AcessoAtual>();
  const [fase, setFase] = useState<'entrar' | 'carregando' | 'pronto'>(sessao.token() ? 'carregando' : 'entrar');
  const [motivo, setMotivo] = useState<string>();
  const [menuAberto, setMenuAberto] = useState(false);
  const { caminho } = useRota();

  useEffect(() => {
    quandoExpirar(() => {
      setAcesso(undefined);
      setMotivo('A sessão terminou ou o token foi recusado (401). Entre de novo.');
      setFase('entrar');
    });
  }, []);

  useEffect(() => {
    if (fase !== 'carregando') return;
    dados(cliente.GET('/auth/acesso'))
      .then((a) => {
        setAcesso(a);
        setMotivo(undefined);
        setFase('pronto');
      })
      .catch((error: unknown) => {
        sessao.sair();
        setMotivo(error instanceof ErroDaApi ? error.texto : String(error));
        setFase('entrar');
      });
  }, [fase]);

  useEffect(() => setMenuAberto(false), [caminho]);

  if (fase === 'entrar') return <TelaEntrar motivo={motivo} entrou={() => setFase('carregando')} />;
  if (fase === 'carregando' || !acesso)
    return (
      <main id="conteudo">
        <Carregando texto="Verificando o acesso…" />
      </main>
    );

  const p: Pode = (area, acao) => pode(acesso, area, acao);
  const grupos = MENU.map((g) => ({ ...g, itens: g.itens.filter((i) => i.ver(p, acesso)) })).filter(
    (g) => g.itens.length,
  );
  const semNada = grupos.length === 0;
  return (
    <div class="painel">
      <a class="pular" href="#conteudo">
        Pular para o conteúdo
      </a>
      <header class="topo">
        <span class="marca">Hub de eventos</span>
        <button
          type="button"
          class="abrir-menu"
          aria-expanded={menuAberto}
          aria-controls="menu"
          onClick={() => setMenuAberto(!menuAberto)}
        >
          Menu
        </button>
        <span class="quem">
          {acesso.nome || acesso.email}
          {acesso.master ? ' · master' : acesso.perfil_acesso ? ` · ${acesso.perfil_acesso}` : ''}
        </span>
        <button
          type="button"
          onClick={() => {
            sessao.sair();
            setAcesso(undefined);
            setMotivo(undefined);
            setFase('entrar');
          }}
        >
          Sair
        </button>
      </header>
      <nav id="menu" class={menuAberto ? 'menu aberto' : 'menu'} aria-label="Menu principal">
        {grupos.map((g) => (
          <div key={g.grupo} class="grupo">
            <h2>{g.grupo}</h2>
            <ul>
              {g.itens.map((i) => (
                <li key={i.para}>
                  <Link para={i.para} aria-current={caminho === i.para ? 'page' : undefined}>
                    {i.rotulo}
                  </Link>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      <main id="conteudo" tabIndex={-1}>
        {semNada ? (
          <Aviso erro="Seu acesso não tem nenhuma permissão do painel. Peça um perfil de acesso a quem administra os acessos." />
        ) : (
          <Conteudo caminho={caminho} p={p} />
        )}
      </main>
    </div>
  );
}

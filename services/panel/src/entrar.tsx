import { useEffect, useState } from 'preact/hooks';
import { sessao } from './api';
import { Campo, type CampoDef } from './formulario';
import { Aviso } from './ui';

interface Ambiente {
  ambiente: string;
  entrar: boolean;
}

const CAMPOS: CampoDef[] = [
  { nome: 'email', rotulo: 'E-mail', tipo: 'email', obrigatorio: true },
  { nome: 'nome', rotulo: 'Nome' },
  { nome: 'master', rotulo: 'master', tipo: 'booleano' },
];

/**
 * LOCALHOST: asks identity-dev for a token through the gateway (POST /painel/entrar).
 * SANDBOX and PRODUCTION: the identity service signs people in; its token is pasted here.
 */
export function TelaEntrar(props: { entrou: () => void; motivo?: string }) {
  const [ambiente, setAmbiente] = useState<Ambiente>();
  const [valores, setValores] = useState<Record<string, string | boolean>>({ email: '', nome: '', master: false });
  const [erro, setErro] = useState<string>();
  const [enviando, setEnviando] = useState(false);

  useEffect(() => {
    fetch('/painel/ambiente.json')
      .then((r) => r.json() as Promise<Ambiente>)
      .then(setAmbiente)
      .catch(() => setAmbiente({ ambiente: '?', entrar: false }));
  }, []);

  const entrar = async (e: Event) => {
    e.preventDefault();
    setErro(undefined);
    setEnviando(true);
    try {
      const token = ambiente?.entrar ? await pedirToken(valores) : String(valores.token ?? '').trim();
      if (!token) throw new Error('Informe o token.');
      sessao.guardar(token);
      props.entrou();
    } catch (error) {
      setErro((error as Error).message);
    } finally {
      setEnviando(false);
    }
  };

  return (
    <main id="conteudo" class="entrar">
      <form class="formulario" onSubmit={entrar} aria-label="Entrar">
        <h1>Entrar no painel do hub de eventos</h1>
        {props.motivo && <Aviso erro={props.motivo} />}
        {ambiente === undefined ? (
          <p class="estado" role="status">
            Carregando…
          </p>
        ) : ambiente.entrar ? (
          <>
            <p class="nota">Ambiente {ambiente.ambiente}: o token vem do identity-dev.</p>
            {CAMPOS.map((campo) => (
              <Campo
                key={campo.nome}
                campo={campo}
                prefixo="entrar"
                valor={valores[campo.nome] ?? ''}
                erros={[]}
                mudar={(v) => setValores((atual) => ({ ...atual, [campo.nome]: v }))}
              />
            ))}
          </>
        ) : (
          <Campo
            campo={{ nome: 'token', rotulo: 'Token do serviço de identidade', obrigatorio: true }}
            prefixo="entrar"
            valor={valores.token ?? ''}
            erros={[]}
            mudar={(v) => setValores((atual) => ({ ...atual, token: v }))}
          />
        )}
        {erro && <Aviso erro={erro} />}
        <button type="submit" class="primario" disabled={enviando || ambiente === undefined}>
          {enviando ? 'Entrando…' : 'Entrar'}
        </button>
      </form>
    </main>
  );
}

async function pedirToken(valores: Record<string, string | boolean>): Promise<string> {
  const email = String(valores.email ?? '').trim();
  const nome = String(valores.nome ?? '').trim();
  const resposta = await fetch('/painel/entrar', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, ...(nome ? { nome } : {}), master: valores.master === true }),
  });
  const corpo = (await resposta.json().catch(() => ({}))) as { access_token?: string; detail?: string };
  if (!resposta.ok || !corpo.access_token)
    throw new Error(corpo.detail ?? `O serviço de identidade respondeu ${resposta.status}.`);
  return corpo.access_token;
}

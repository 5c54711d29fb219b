import { useEffect, useState } from 'preact/hooks';
import { Aviso } from '../ui';
import { AbaAssinaturas } from './assinaturas';
import { AbaEntregas } from './entregas';
import { quandoExpirar, tokenDoPortal } from './sessao';
import { AbaTipos } from './tipos';

const ABAS = [
  { id: 'assinaturas', rotulo: 'Assinaturas' },
  { id: 'tipos', rotulo: 'Tipos de evento' },
  { id: 'entregas', rotulo: 'Entregas' },
] as const;
type Aba = (typeof ABAS)[number]['id'];

/**
 * The subscribers' portal (docs/decisions/subscribers-portal.md): what a subscribing application's
 * developers see through an operator's link, for that application alone.
 */
export function Portal() {
  const [token] = useState(tokenDoPortal);
  const [expirado, setExpirado] = useState(false);
  const [aba, setAba] = useState<Aba>('assinaturas');
  useEffect(() => quandoExpirar(() => setExpirado(true)), []);
  if (!token || expirado)
    return (
      <main id="conteudo" class="entrar">
        <h1>Portal do assinante</h1>
        <Aviso
          erro={
            expirado
              ? 'O link do portal expirou ou foi revogado. Peça um novo link a quem opera o hub.'
              : 'Abra o portal pelo link que o operador do hub enviou (ele traz o acesso no endereço).'
          }
        />
      </main>
    );
  return (
    <div class="portal">
      <a class="pular" href="#conteudo">
        Pular para o conteúdo
      </a>
      <header class="topo">
        <span class="marca">Hub de eventos · portal do assinante</span>
      </header>
      <nav class="abas" aria-label="Seções do portal">
        {ABAS.map((a) => (
          <button
            key={a.id}
            type="button"
            aria-current={aba === a.id ? 'page' : undefined}
            onClick={() => setAba(a.id)}
          >
            {a.rotulo}
          </button>
        ))}
      </nav>
      <main id="conteudo" tabIndex={-1}>
        {aba === 'assinaturas' && <AbaAssinaturas />}
        {aba === 'tipos' && <AbaTipos />}
        {aba === 'entregas' && <AbaEntregas />}
      </main>
    </div>
  );
}

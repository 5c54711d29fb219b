import { dados, type Pagina } from '../api';
import { useCarga } from '../carga';
import { Estado, Json, Titulo } from '../ui';
import { portal } from './sessao';

/** GET /tipos-de-evento, every page: the types the application may subscribe to (the form's choices too). */
export async function lerTipos() {
  const tipos = [];
  for (let pagina = 1; ; pagina++) {
    const p = await dados(portal.GET('/tipos-de-evento', { params: { query: { pagina, tamanho: 100 } } }));
    tipos.push(...p.itens);
    if (tipos.length >= p.total || p.itens.length === 0) return tipos;
  }
}
export type TipoOferecido = Awaited<ReturnType<typeof lerTipos>>[number];
export type { Pagina };

export function AbaTipos() {
  const carga = useCarga(lerTipos, 'tipos');
  return (
    <>
      <Titulo>Tipos de evento</Titulo>
      <p class="nota">
        Os tipos ativos, que qualquer aplicativo pode assinar, com o esquema JSON de cada versão e um corpo de exemplo
        de entrega.
      </p>
      <Estado carga={carga} vazio={(t) => t.length === 0} textoVazio="Nenhum tipo de evento ativo.">
        {(tipos) => (
          <ul class="lista-de-tipos">
            {tipos.map((tipo) => (
              <li key={tipo.id}>
                <h2>{tipo.nome}</h2>
                {tipo.descricao && <p>{tipo.descricao}</p>}
                {tipo.versoes.map((v) => (
                  <details key={v.versao}>
                    <summary>
                      Versão {v.versao}
                      {v.descricao ? ` · ${v.descricao}` : ''}
                    </summary>
                    <h3>Esquema</h3>
                    <Json valor={v.esquema} rotulo={`Esquema de ${tipo.nome} v${v.versao}`} />
                    <h3>Corpo de exemplo</h3>
                    <Json valor={v.exemplo} rotulo={`Exemplo de ${tipo.nome} v${v.versao}`} />
                  </details>
                ))}
              </li>
            ))}
          </ul>
        )}
      </Estado>
    </>
  );
}

import { useState } from 'preact/hooks';
import { dados, type ItemDe } from '../api';
import { useCarga } from '../carga';
import { colunasDeTentativa, SITUACOES, Situacao } from '../telas/entregas';
import { Acao, type Coluna, data, Estado, Paginacao, Tabela, Titulo } from '../ui';
import { portal } from './sessao';

type Entrega = ItemDe<'/entregas'>;

/** One delivery's attempts (GET /entregas/{id}), opened under the list. */
function Tentativas(props: { entregaId: string }) {
  const carga = useCarga(
    () => dados(portal.GET('/entregas/{id}', { params: { path: { id: props.entregaId } } })),
    props.entregaId,
  );
  return (
    <Estado carga={carga} vazio={(e) => e.tentativas.length === 0} textoVazio="Nenhuma tentativa ainda.">
      {(e) => <Tabela legenda={`Tentativas da entrega ${e.id}`} colunas={colunasDeTentativa} itens={e.tentativas} />}
    </Estado>
  );
}

/** The application's deliveries, newest first, by state; each with its attempts and a resend. */
export function AbaEntregas() {
  const [pagina, setPagina] = useState(1);
  const [situacao, setSituacao] = useState('');
  const [aberta, setAberta] = useState<string>();
  const [versao, setVersao] = useState(0);
  const carga = useCarga(
    () =>
      dados(
        portal.GET('/entregas', {
          params: {
            query: { pagina, tamanho: 20, ...(situacao ? { situacao: situacao as Entrega['situacao'] } : {}) },
          },
        }),
      ),
    `${pagina}|${situacao}|${versao}`,
  );
  return (
    <>
      <Titulo>Entregas</Titulo>
      <div class="campo">
        <label for="portal-situacao">situacao</label>
        <select
          id="portal-situacao"
          value={situacao}
          onChange={(e) => {
            setSituacao((e.target as HTMLSelectElement).value);
            setPagina(1);
          }}
        >
          <option value="">todas</option>
          {SITUACOES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <Estado carga={carga} vazio={(p) => p.itens.length === 0} textoVazio="Nenhuma entrega.">
        {(p) => (
          <>
            <Tabela
              legenda="Entregas"
              itens={p.itens}
              colunas={colunasDaEntrega(aberta, setAberta, () => setVersao((v) => v + 1))}
            />
            <Paginacao pagina={p.pagina} tamanho={p.tamanho} total={p.total} ir={setPagina} />
            {aberta && (
              <section aria-label="Tentativas da entrega aberta">
                <h2>Tentativas</h2>
                <Tentativas entregaId={aberta} />
              </section>
            )}
          </>
        )}
      </Estado>
    </>
  );
}

/** A delivery's row: when, its state and attempts, and its actions (its attempts opened below, a resend). */
function colunasDaEntrega(
  aberta: string | undefined,
  setAberta: (id: string | undefined) => void,
  recarregar: () => void,
): Coluna<Entrega>[] {
  return [
    { rotulo: 'Criada em', valor: (e: Entrega) => data(e.criada_em) },
    { rotulo: 'situacao', valor: (e) => <Situacao valor={e.situacao} /> },
    { rotulo: 'Tipo', valor: (e) => `${e.tipo_de_evento_nome} v${e.versao_do_esquema}` },
    { rotulo: 'entidade_id', valor: (e) => e.entidade_id },
    {
      rotulo: 'Tentativas',
      valor: (e) => `${e.tentativas_no_ciclo_atual}/${e.maximo_de_tentativas} (${e.quantidade_de_tentativas})`,
    },
    { rotulo: 'Último erro', valor: (e) => e.ultimo_erro ?? '—' },
    {
      rotulo: 'Ações',
      valor: (e) => (
        <>
          <button
            type="button"
            aria-expanded={aberta === e.id}
            aria-label={`Tentativas da entrega de ${data(e.criada_em)}`}
            onClick={() => setAberta(aberta === e.id ? undefined : e.id)}
          >
            Tentativas
          </button>{' '}
          <Acao
            rotulo="Reenviar"
            rotuloAcessivel={`Reenviar a entrega de ${data(e.criada_em)}`}
            fazer={() => dados(portal.POST('/entregas/{id}/reenviar', { params: { path: { id: e.id } } }))}
            depois={recarregar}
          />
        </>
      ),
    },
  ];
}

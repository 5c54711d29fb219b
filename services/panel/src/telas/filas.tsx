import { useState } from 'preact/hooks';
import { cliente, dados, type ItemDe, type Resposta } from '../api';
import { useCarga } from '../carga';
import { Link } from '../rota';
import { Acao, Aviso, type Coluna, Carregando, Json, Tabela, Titulo } from '../ui';
import { Situacao } from './entregas';

type Fila = ItemDe<'/fila'>;
type Olhar = Resposta<'/fila/{nome}/mensagens', 'get'>;
type Mensagem = Olhar['itens'][number];

/** How many messages one look shows; each look shows the next ones (the API copies them to the tail). */
const LIMITE = 20;

// 'destino' named apart too, so this compiles before and after @hub/client is generated again.
const PAPEIS: Record<Fila['papel'] | 'destino', string> = {
  trabalho: 'trabalho (entregas a fazer)',
  atraso: 'atraso (espera da próxima tentativa)',
  erro: 'erro (tentativas esgotadas)',
  destino: 'destino (fila própria de um destino retido ou acumulado)',
};

const colunasDaMensagem: Coluna<Mensagem>[] = [
  {
    rotulo: 'Entrega',
    valor: (m) =>
      m.entrega_id ? <Link para={`/entregas/${m.entrega_id}`}>{m.entrega_id.slice(-12)}</Link> : 'ilegível',
  },
  {
    rotulo: 'situacao da entrega',
    valor: (m) => (m.situacao_da_entrega ? <Situacao valor={m.situacao_da_entrega} /> : '—'),
  },
  { rotulo: 'motivo', valor: (m) => m.motivo ?? '—' },
  { rotulo: 'Tentativas', valor: (m) => m.tentativas ?? '—' },
  { rotulo: 'Último erro', valor: (m) => m.ultimo_erro ?? '—' },
  { rotulo: 'Destino', valor: (m) => m.url_de_destino ?? '—' },
  {
    rotulo: 'Evento',
    valor: (m) => (m.evento_id ? <Link para={`/eventos/${m.evento_id}`}>{m.evento_id.slice(-12)}</Link> : '—'),
  },
];

/** A look at the error queue's messages, without taking them out. */
function MensagensDaFila(props: { olhar: Olhar; outra: () => void }) {
  const { olhar } = props;
  return (
    <section aria-labelledby="mensagens-da-fila">
      <h2 id="mensagens-da-fila">Mensagens da fila {olhar.fila}</h2>
      <p class="nota" role="status">
        {olhar.itens.length} de {olhar.mensagens_na_fila} mensagens na fila. Cada olhada mostra as seguintes; nada sai
        da fila.
      </p>
      {olhar.itens.length ? (
        <Tabela
          legenda={`Mensagens da fila ${olhar.fila}`}
          colunas={colunasDaMensagem}
          itens={olhar.itens}
          chave={(m) => m.entrega_id ?? JSON.stringify(m)}
        />
      ) : (
        <p class="estado vazio">Nenhuma mensagem na fila.</p>
      )}
      <div class="barra">
        <button type="button" onClick={props.outra}>
          Olhar as seguintes
        </button>
        <Link para="/entregas?situacao=fila_de_erro">Reprocessar em Entregas (situacao fila_de_erro)</Link>
      </div>
    </section>
  );
}

export function TelaFilas(props: { podeEditar: boolean }) {
  const carga = useCarga(() => dados(cliente.GET('/fila')), 'filas', 5000);
  const [conciliacao, setConciliacao] = useState<unknown>();
  const [olhada, setOlhada] = useState<{ nome: string; vez: number }>();
  const olhar = useCarga(
    (): Promise<Olhar | undefined> =>
      olhada
        ? dados(
            cliente.GET('/fila/{nome}/mensagens', {
              params: { path: { nome: olhada.nome }, query: { limite: LIMITE } },
            }),
          )
        : Promise.resolve(undefined),
    `${olhada?.nome}|${olhada?.vez}`,
  );
  const colunas: Coluna<Fila>[] = [
    { rotulo: 'Nome', valor: (f) => f.nome },
    { rotulo: 'Papel', valor: (f) => PAPEIS[f.papel] ?? f.papel },
    { rotulo: 'Mensagens', valor: (f) => (f.declarada ? f.mensagens.toLocaleString('pt-BR') : 'não declarada') },
    { rotulo: 'Consumidores', valor: (f) => f.consumidores },
    {
      rotulo: 'Ações',
      valor: (f) =>
        f.papel === 'erro' && (
          <button
            type="button"
            aria-label={`Ver mensagens da fila ${f.nome}`}
            onClick={() => setOlhada((o) => ({ nome: f.nome, vez: (o?.vez ?? 0) + 1 }))}
          >
            Ver mensagens
          </button>
        ),
    },
  ];
  return (
    <>
      <Titulo
        acoes={
          props.podeEditar && (
            <Acao
              rotulo="Conciliar a fila de erro"
              fazer={() => dados(cliente.POST('/fila/erro/conciliar'))}
              depois={setConciliacao}
            />
          )
        }
      >
        Filas
      </Titulo>
      {carga.erro && <Aviso erro={carga.erro} />}
      {carga.dados === undefined ? (
        carga.carregando && <Carregando />
      ) : carga.dados.length === 0 ? (
        <p class="estado vazio">Nenhuma fila declarada.</p>
      ) : (
        <Tabela legenda="Filas de entrega" chave={(f) => f.nome} itens={carga.dados} colunas={colunas} />
      )}
      {olhada &&
        (olhar.erro ? (
          <Aviso erro={olhar.erro} />
        ) : olhar.dados === undefined || olhar.carregando ? (
          <Carregando texto="Olhando a fila…" />
        ) : (
          <MensagensDaFila olhar={olhar.dados} outra={() => setOlhada((o) => o && { ...o, vez: o.vez + 1 })} />
        ))}
      {conciliacao !== undefined && (
        <>
          <h2>Resultado da conciliação</h2>
          <Json valor={conciliacao} rotulo="Resultado da conciliação" />
        </>
      )}
    </>
  );
}

import { cliente, type Corpo, dados, type ItemDe } from '../api';
import { useCarga } from '../carga';
import { Formulario } from '../formulario';
import { Lista } from '../lista';
import { Link, navegar } from '../rota';
import { Acao, type Coluna, data, Estado, simNao, Titulo } from '../ui';
import { Situacao } from './entregas';

type Reproducao = ItemDe<'/reproducao'>;

/** Events handled so far: each one is created, resent or ignored. */
const tratados = (r: Reproducao) => r.criadas + r.reenviadas + r.ignoradas;

function Progresso(props: { r: Reproducao }) {
  const { r } = props;
  return (
    <>
      <progress
        max={Math.max(1, r.quantidade_de_eventos)}
        value={Math.min(tratados(r), r.quantidade_de_eventos)}
        aria-label={`Progresso da reprodução de ${data(r.criada_em)}`}
      />{' '}
      <span>
        {tratados(r)} de {r.quantidade_de_eventos} eventos
      </span>
    </>
  );
}

const colunas: Coluna<Reproducao>[] = [
  { rotulo: 'Criada em', valor: (r) => <Link para={`/reproducoes/${r.id}`}>{data(r.criada_em)}</Link> },
  { rotulo: 'situacao', valor: (r) => <Situacao valor={r.situacao} /> },
  { rotulo: 'Intervalo', valor: (r) => `${data(r.desde)} – ${data(r.ate)}` },
  { rotulo: 'Progresso', valor: (r) => <Progresso r={r} /> },
  { rotulo: 'Criadas', valor: (r) => r.criadas },
  { rotulo: 'Reenviadas', valor: (r) => r.reenviadas },
  { rotulo: 'Ignoradas', valor: (r) => r.ignoradas },
  { rotulo: 'Pedida por', valor: (r) => r.solicitada_por },
];

/** Every replay, or one subscription's (?assinatura_id=…), refreshed while they run. */
export function TelaReproducoes() {
  const assinaturaId = new URLSearchParams(location.search).get('assinatura_id');
  return (
    <>
      <Titulo>Reproduções</Titulo>
      {assinaturaId && <p class="nota">Da assinatura {assinaturaId}.</p>}
      <Lista
        legenda="Reproduções"
        caminho="/reproducao"
        colunas={colunas}
        filtrosIniciais={assinaturaId ? { assinatura_id: assinaturaId } : undefined}
        textoVazio="Nenhuma reprodução pedida."
        intervaloMs={3000}
      />
    </>
  );
}

/** The dates form of a replay to one subscription; once asked, its progress. */
export function TelaReproduzir(props: { assinaturaId: string }) {
  return (
    <>
      <Titulo>Reproduzir eventos</Titulo>
      <p class="nota">
        Os eventos guardados do tipo e da versão da assinatura recebidos no intervalo (inclusive) que o filtro atual
        aceita. Um evento sem entrega a esta assinatura ganha uma; um que já tem fica como está, a menos que
        incluir_entregues esteja marcado.
      </p>
      <Formulario
        titulo="Reproduzir"
        rotulo="Reproduzir"
        campos={[
          { nome: 'desde', rotulo: 'desde (recebido_em)', tipo: 'data', obrigatorio: true },
          { nome: 'ate', rotulo: 'ate (recebido_em)', tipo: 'data', obrigatorio: true },
          {
            nome: 'incluir_entregues',
            rotulo: 'incluir_entregues',
            tipo: 'booleano',
            ajuda: 'um evento que já tem entrega ganha um novo ciclo dela, com o mesmo webhook-id',
          },
        ]}
        enviar={(corpo: Corpo<'/assinatura/{id}/reproduzir', 'post'>) =>
          dados(
            cliente.POST('/assinatura/{id}/reproduzir', { params: { path: { id: props.assinaturaId } }, body: corpo }),
          )
        }
        aoConcluir={(r) => navegar(`/reproducoes/${r.id}`)}
      />
      <Link para={`/reproducoes?assinatura_id=${props.assinaturaId}`}>Reproduções desta assinatura</Link>
    </>
  );
}

export function TelaReproducao(props: { id: string; podeCancelar: boolean }) {
  const carga = useCarga(
    () => dados(cliente.GET('/reproducao/{id}', { params: { path: { id: props.id } } })),
    props.id,
    1500,
  );
  const aberta = carga.dados?.situacao === 'pendente' || carga.dados?.situacao === 'em_andamento';
  return (
    <>
      <Titulo
        acoes={
          props.podeCancelar &&
          aberta && (
            <Acao
              rotulo="Cancelar"
              perigo
              confirmar="Cancelar a reprodução? O que já foi entregue fica."
              fazer={() => dados(cliente.POST('/reproducao/{id}/cancelar', { params: { path: { id: props.id } } }))}
              depois={carga.recarregar}
            />
          )
        }
      >
        Reprodução
      </Titulo>
      <Estado carga={carga}>
        {(r) => (
          <dl class="detalhe">
            <dt>situacao</dt>
            <dd>
              <Situacao valor={r.situacao} />
            </dd>
            <dt>Progresso</dt>
            <dd>
              <Progresso r={r} />
              <span role="status">
                {' '}
                · {r.criadas} criadas, {r.reenviadas} reenviadas, {r.ignoradas} ignoradas
              </span>
            </dd>
            <dt>Assinatura</dt>
            <dd>
              <Link para={`/entregas?assinatura_id=${r.assinatura_id}`}>{r.assinatura_id}</Link>
            </dd>
            <dt>Intervalo (recebido_em)</dt>
            <dd>
              {data(r.desde)} – {data(r.ate)}
            </dd>
            <dt>incluir_entregues</dt>
            <dd>{simNao(r.incluir_entregues)}</dd>
            <dt>Pedida por</dt>
            <dd>{r.solicitada_por}</dd>
            <dt>Criada em</dt>
            <dd>{data(r.criada_em)}</dd>
            <dt>Concluída em</dt>
            <dd>{data(r.concluida_em)}</dd>
          </dl>
        )}
      </Estado>
    </>
  );
}

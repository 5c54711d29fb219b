import { useState } from 'preact/hooks';
import { cliente, dados, type Resposta } from '../api';
import { Acao, data } from '../ui';

type Link = Resposta<'/aplicativo/{id}/portal', 'post'>;

/**
 * An application's links to the subscribers' portal: make one (an hour long; its address shown once,
 * to be handed to the application's developers) or revoke every link made so far.
 */
export function LinkDoPortal(props: { aplicativo: { id: string; nome: string } }) {
  const [link, setLink] = useState<Link>();
  const path = { params: { path: { id: props.aplicativo.id } } };
  return (
    <span class="acao">
      <Acao
        rotulo="Link do portal"
        rotuloAcessivel={`Link do portal de ${props.aplicativo.nome}`}
        fazer={() => dados(cliente.POST('/aplicativo/{id}/portal', { ...path, body: {} }))}
        depois={(r) => setLink(r as Link)}
      />{' '}
      <Acao
        rotulo="Revogar links"
        rotuloAcessivel={`Revogar links do portal de ${props.aplicativo.nome}`}
        perigo
        confirmar="Todos os links do portal deste aplicativo deixam de funcionar."
        fazer={() => dados(cliente.DELETE('/aplicativo/{id}/portal', path))}
        depois={() => setLink(undefined)}
      />
      {link && (
        <span class="campo">
          <label for={`portal-${props.aplicativo.id}`}>Link (vale até {data(link.expira_em)})</label>
          <input id={`portal-${props.aplicativo.id}`} type="text" readOnly value={link.url} />
        </span>
      )}
    </span>
  );
}

/** Who made a subscription's last change, and when: "aplicativo loja-demo" or "operador ana@…". */
export function AlteradaPor(props: {
  assinatura: { alterada_por_tipo: string | null; alterada_por: string | null; alterada_em: string | null };
}) {
  const { alterada_por_tipo, alterada_por, alterada_em } = props.assinatura;
  if (!alterada_por_tipo) return <>—</>;
  return (
    <>
      {alterada_por_tipo} {alterada_por ?? ''}
      <br />
      <small>{data(alterada_em)}</small>
    </>
  );
}

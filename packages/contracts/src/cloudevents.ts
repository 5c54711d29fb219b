/**
 * A delivery body in the CloudEvents 1.0 HTTP binding, structured mode (docs/contract.md §11): what a
 * subscription with `formato: cloudevents` receives, signed with the same Standard Webhooks headers.
 */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json';

/** The key that ends the hub's delivery body: dados is always its last member (corposDaEntrega). */
const DADOS = ',"dados":';

interface CabecaPadrao {
  id: string;
  tipo: string;
  versao_do_esquema: number;
  entidade_id: string;
  ocorrido_em: string;
  aplicativo_publicador_id: string;
  assinatura_id: string;
  sequencia?: number;
}

/**
 * The CloudEvents body of a delivery, made from its standard body (the job's `corpo`, as
 * corposDaEntrega wrote it). `dados` moves into `data` as its text stands, so a 20-digit integer keeps
 * every digit. Every member before dados is a string, number or boolean that JSON.stringify wrote:
 * a quote inside a string is escaped, so the first `,"dados":` is the member itself.
 * `urlDoEsquema(nome, versao)` is the address of GET /esquema/{nome}/{versao} (dataschema).
 */
export function corpoCloudEvents(corpoPadrao: string, urlDoEsquema: (nome: string, versao: number) => string): string {
  const inicio = corpoPadrao.indexOf(DADOS);
  if (inicio < 0 || !corpoPadrao.endsWith('}')) throw new Error('a delivery body ends with its dados');
  const cabeca = JSON.parse(`${corpoPadrao.slice(0, inicio)}}`) as CabecaPadrao;
  const dadosTexto = corpoPadrao.slice(inicio + DADOS.length, -1);
  const atributos = JSON.stringify({
    specversion: '1.0',
    id: cabeca.id,
    source: `/aplicativos/${cabeca.aplicativo_publicador_id}`,
    type: cabeca.tipo,
    subject: cabeca.entidade_id,
    time: cabeca.ocorrido_em,
    dataschema: urlDoEsquema(cabeca.tipo, cabeca.versao_do_esquema),
    datacontenttype: 'application/json',
    assinaturaid: cabeca.assinatura_id,
    // CloudEvents' sequence is a string; only an ordered subscription's deliveries have one.
    ...(cabeca.sequencia === undefined ? {} : { sequence: String(cabeca.sequencia) }),
  });
  return `${atributos.slice(0, -1)},"data":${dadosTexto}}`;
}

/** The address of a version's raw schema under a base URL (the gateway's public address). */
export const urlDoEsquemaEm =
  (base: string) =>
  (nome: string, versao: number): string =>
    `${base.replace(/\/+$/, '')}/esquema/${encodeURIComponent(nome)}/${versao}`;

export { rastreamentoLigado } from './estado';
export {
  comRastro,
  iniciarTrecho,
  novoRastro,
  type OpcoesDoTrecho,
  type Portador,
  publicando,
  type Rastro,
  rastroDe,
  rastroDeSaida,
  SpanKind,
  TRACEPARENT,
  TRACESTATE,
  type Trecho,
  traceparentValido,
} from './rastro';

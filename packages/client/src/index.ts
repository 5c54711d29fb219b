export {
  createHubClient,
  type Assinatura,
  type AssinaturaAtualizar,
  type AssinaturaCriar,
  type Entrega,
  type Evento,
  type EventoCriar,
  type FiltroDeAssinaturas,
  type FiltroDeEntregas,
  type HubClient,
  type HubClientOptions,
  type PaginaDeAssinaturas,
  type PaginaDeEntregas,
  type PaginaDeReproducoes,
  type PaginaDeTiposDeEvento,
  type Problema,
  type PublishOptions,
  type Reproducao,
  type ReproducaoCriar,
  type RetryOptions,
  type SaudeDaAssinatura,
  type TokenProvider,
} from './client.js';
export { HubError, HubNetworkError } from './errors.js';
export type { components, paths, webhooks } from './generated/schema.js';
export { type ApiClient, type ApiClientOptions, createApiClient } from './api-client.js';

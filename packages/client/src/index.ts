export {
  createHubClient,
  type Evento,
  type EventoCriar,
  type HubClient,
  type HubClientOptions,
  type Problema,
  type PublishOptions,
  type RetryOptions,
  type TokenProvider,
} from './client.js';
export { HubError, HubNetworkError } from './errors.js';
export type { components, paths, webhooks } from './generated/schema.js';
export { type ApiClient, type ApiClientOptions, createApiClient } from './api-client.js';

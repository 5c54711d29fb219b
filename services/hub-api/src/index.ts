export { createApp, type HubApiAppDeps } from './app';
export { hubApiConfig, type HubApiConfig } from './config';
export { createDb, type Db } from './db';
export { type RunningHubApi, startHubApi } from './start';
export { type ResultadoDaValidacao, ValidadorDeEsquemas } from './validation/esquemas';

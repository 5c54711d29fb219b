export { createApp, DESTINO_DOS_ANUNCIOS, type FunctionAppDeps } from './app';
export { functionConfig, type FunctionConfig } from './config';
export { MIGRATIONS_DIR, type RunningFunction, startFunction } from './start';

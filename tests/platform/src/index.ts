export * from './platform';
export * from './service-process';

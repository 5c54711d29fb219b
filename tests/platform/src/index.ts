export * from './platform';
export * from './service-process';
export * from './e2e/receptor';

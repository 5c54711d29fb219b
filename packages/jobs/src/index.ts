export * from './periodic';

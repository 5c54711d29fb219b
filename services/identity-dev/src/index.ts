export * from './app';
export * from './keys';

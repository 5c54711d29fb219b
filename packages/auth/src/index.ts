export * from './guard';
export * from './invalidation';
export * from './resolver';
export * from './tokens';
export * from './checks';

export * from './listener';
export * from './relay';
export * from './table';

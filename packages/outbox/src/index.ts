export * from './relay';
export * from './table';

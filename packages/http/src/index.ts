export * from './app';
export * from './errors';
export * from './middleware';
export * from './openapi';
export * from './pagination';
export * from './route';
export * from './validation';
export * from './text';

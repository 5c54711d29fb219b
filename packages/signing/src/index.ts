export * from './headers';
export * from './key-file';
export * from './keys';
export * from './published';
export * from './sign';
export * from './verify';

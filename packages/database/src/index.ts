export * from './ids';
export * from './migrate';
export * from './prisma';
export * from './pool';
export * from './sql';
export * from './listener';
export * from './session';
export * from './group-commit';

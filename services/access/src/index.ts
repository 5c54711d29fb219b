export { createApp } from './app';
export { startAccess } from './start';
export { startAccessForTests, type TestAccess } from './access.test-support';

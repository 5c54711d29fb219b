export { createApp } from './app';
export { startAccess } from './start';

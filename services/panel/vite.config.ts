import { defineConfig } from 'vite';

declare const process: { env: Record<string, string | undefined> };

// The gateway serves the build at /painel/; `pnpm --filter @hub/panel dev` proxies the API to a running gateway.
const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
const api = /^\/(?!painel\/(?:@|src|node_modules|$))/;

export default defineConfig({
  base: '/painel/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false },
  server: { proxy: { [api.source]: { target: gateway, changeOrigin: true } } },
});

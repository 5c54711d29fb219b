import { defineConfig } from 'vite';

declare const process: { env: Record<string, string | undefined> };

// The gateway serves the build at /painel/ (index.html) and /portal/ (portal.html, the subscribers'
// portal, whose assets are under /painel/assets too); `pnpm --filter @hub/panel dev` proxies the API
// to a running gateway.
const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
const api = /^\/(?!painel\/(?:@|src|node_modules|$))/;

export default defineConfig({
  base: '/painel/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    rollupOptions: { input: { painel: 'index.html', portal: 'portal.html' } },
  },
  server: { proxy: { [api.source]: { target: gateway, changeOrigin: true } } },
});

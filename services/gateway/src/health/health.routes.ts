import { Router } from 'express';
import type { Upstream } from '../routes';

const CHECK_TIMEOUT_MS = 2000;

/**
 * "ok" when at least one instance of the upstream is ready (the proxy spreads requests over the
 * instances and moves on from one that refuses connections), or why none is (without internal
 * addresses: this page is public).
 */
async function readinessOf(upstream: Upstream): Promise<string> {
  const estados = await Promise.all(upstream.urls.map(readinessAt));
  return estados.find((estado) => estado === 'ok') ?? estados[0] ?? 'falha: inacessivel';
}

async function readinessAt(url: string): Promise<string> {
  try {
    const response = await fetch(`${url}/saude/prontidao`, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    await response.body?.cancel();
    return response.ok ? 'ok' : `falha: respondeu ${response.status}`;
  } catch (error) {
    return (error as Error).name === 'TimeoutError'
      ? `falha: sem resposta em ${CHECK_TIMEOUT_MS} ms`
      : 'falha: inacessivel';
  }
}

/** /saude answers for the gateway itself; /saude/prontidao is ready only when every upstream is. */
export function healthRouter(upstreams: Upstream[]): Router {
  const router = Router();
  const enabled = upstreams.filter((u) => u.enabled);
  router.get('/saude', (_req, res) => {
    res.json({ situacao: 'ok', servico: 'gateway' });
  });
  router.get('/saude/prontidao', async (_req, res) => {
    const states = await Promise.all(enabled.map(async (u) => [u.name, await readinessOf(u)] as const));
    const ready = states.every(([, state]) => state === 'ok');
    res.set('cache-control', 'no-store');
    res
      .status(ready ? 200 : 503)
      .json({ situacao: ready ? 'ok' : 'indisponivel', servico: 'gateway', dependencias: Object.fromEntries(states) });
  });
  return router;
}

import { Router } from 'express';
import { Agent, type Dispatcher, request } from 'undici';
import { instanceOf, type Upstream } from '../routes';

const CHECK_TIMEOUT_MS = 2000;

/**
 * "ok" when at least one instance of the upstream is ready (the proxy spreads requests over the
 * instances and moves on from one that refuses connections), or why none is (without internal
 * addresses: this page is public).
 */
async function readinessOf(upstream: Upstream, dispatchers: Map<string, Dispatcher>): Promise<string> {
  const estados = await Promise.all(upstream.urls.map((url) => readinessAt(url, dispatchers.get(url))));
  return estados.find((estado) => estado === 'ok') ?? estados[0] ?? 'falha: inacessivel';
}

async function readinessAt(url: string, dispatcher: Dispatcher | undefined): Promise<string> {
  const { origin, prefix } = instanceOf(url);
  try {
    const response = await request(`${origin}${prefix}/saude/prontidao`, {
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      ...(dispatcher ? { dispatcher } : {}),
    });
    await response.body.dump();
    return response.statusCode >= 200 && response.statusCode < 300 ? 'ok' : `falha: respondeu ${response.statusCode}`;
  } catch (error) {
    return (error as Error).name === 'TimeoutError'
      ? `falha: sem resposta em ${CHECK_TIMEOUT_MS} ms`
      : 'falha: inacessivel';
  }
}

/** A dispatcher for each instance on a Unix socket (the others are asked on undici's shared one). */
function socketDispatchers(upstreams: Upstream[]): Map<string, Dispatcher> {
  const dispatchers = new Map<string, Dispatcher>();
  for (const url of upstreams.flatMap((u) => u.urls)) {
    const { socketPath } = instanceOf(url);
    if (socketPath !== undefined) dispatchers.set(url, new Agent({ connect: { socketPath } }));
  }
  return dispatchers;
}

/** /saude answers for the gateway itself; /saude/prontidao is ready only when every upstream is. */
export function healthRouter(upstreams: Upstream[]): Router {
  const router = Router();
  const enabled = upstreams.filter((u) => u.enabled);
  const dispatchers = socketDispatchers(enabled);
  router.get('/saude', (_req, res) => {
    res.json({ situacao: 'ok', servico: 'gateway' });
  });
  router.get('/saude/prontidao', async (_req, res) => {
    const states = await Promise.all(enabled.map(async (u) => [u.name, await readinessOf(u, dispatchers)] as const));
    const ready = states.every(([, state]) => state === 'ok');
    res.set('cache-control', 'no-store');
    res
      .status(ready ? 200 : 503)
      .json({ situacao: ready ? 'ok' : 'indisponivel', servico: 'gateway', dependencias: Object.fromEntries(states) });
  });
  return router;
}

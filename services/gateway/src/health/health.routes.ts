import { Router } from 'express';
import { Agent, type Dispatcher, request } from 'undici';
import { instanceOf, type Upstream } from '../routes';

const CHECK_TIMEOUT_MS = 2000;

/** Where one instance's readiness is asked, parsed once from its URL (routes.ts's instanceOf). */
interface Sonda {
  prontidao: string;
  /** Its own dispatcher when on a Unix socket; undici's shared one otherwise. */
  dispatcher?: Dispatcher;
}

function sondaDe(url: string): Sonda {
  const { origin, prefix, socketPath } = instanceOf(url);
  const prontidao = `${origin}${prefix}/saude/prontidao`;
  return socketPath === undefined ? { prontidao } : { prontidao, dispatcher: new Agent({ connect: { socketPath } }) };
}

/**
 * "ok" when at least one instance of the upstream is ready (the proxy spreads requests over the
 * instances and moves on from one that refuses connections), or why none is (without internal
 * addresses: this page is public).
 */
async function readinessOf(sondas: Sonda[]): Promise<string> {
  const estados = await Promise.all(sondas.map(readinessAt));
  return estados.find((estado) => estado === 'ok') ?? estados[0] ?? 'falha: inacessivel';
}

async function readinessAt({ prontidao, dispatcher }: Sonda): Promise<string> {
  try {
    const response = await request(prontidao, {
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

/** /saude answers for the gateway itself; /saude/prontidao is ready only when every upstream is. */
export function healthRouter(upstreams: Upstream[]): Router {
  const router = Router();
  const enabled = upstreams.filter((u) => u.enabled).map((u) => ({ name: u.name, sondas: u.urls.map(sondaDe) }));
  router.get('/saude', (_req, res) => {
    res.json({ situacao: 'ok', servico: 'gateway' });
  });
  router.get('/saude/prontidao', async (_req, res) => {
    const states = await Promise.all(enabled.map(async (u) => [u.name, await readinessOf(u.sondas)] as const));
    const ready = states.every(([, state]) => state === 'ok');
    res.set('cache-control', 'no-store');
    res
      .status(ready ? 200 : 503)
      .json({ situacao: ready ? 'ok' : 'indisponivel', servico: 'gateway', dependencias: Object.fromEntries(states) });
  });
  return router;
}

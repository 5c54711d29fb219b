import { type RequestHandler, Router } from 'express';
import { Agent, type Dispatcher, request } from 'undici';
import { instanceOf, type Upstream } from '../routes';

const CHECK_TIMEOUT_MS = 2000;
/**
 * How long one round of the services' checks answers every readiness request: the public port's
 * /saude/prontidao fans out to every instance's PostgreSQL and broker checks, so a flood of it
 * reaches them once a second at most (and the rate limit counts it as any other request).
 */
export const PRONTIDAO_CACHE_MS = 1000;

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

/**
 * /saude answers for the gateway itself; /saude/prontidao is ready only when every upstream is, rate
 * limited (`limit`) and asked of the services once per PRONTIDAO_CACHE_MS, whoever asks.
 */
export function healthRouter(upstreams: Upstream[], limit: RequestHandler): Router {
  const router = Router();
  const enabled = upstreams.filter((u) => u.enabled).map((u) => ({ name: u.name, sondas: u.urls.map(sondaDe) }));
  let round: { states: Promise<(readonly [string, string])[]>; until: number } | undefined;
  const check = () => {
    if (round === undefined || round.until <= Date.now()) {
      const states = Promise.all(enabled.map(async (u) => [u.name, await readinessOf(u.sondas)] as const));
      round = { states, until: Number.POSITIVE_INFINITY };
      const current = round;
      void states.then(() => {
        current.until = Date.now() + PRONTIDAO_CACHE_MS;
      });
    }
    return round.states;
  };
  router.get('/saude', (_req, res) => {
    res.json({ situacao: 'ok', servico: 'gateway' });
  });
  router.get('/saude/prontidao', limit, async (_req, res) => {
    const states = await check();
    const ready = states.every(([, state]) => state === 'ok');
    res.set('cache-control', 'no-store');
    res
      .status(ready ? 200 : 503)
      .json({ situacao: ready ? 'ok' : 'indisponivel', servico: 'gateway', dependencias: Object.fromEntries(states) });
  });
  return router;
}

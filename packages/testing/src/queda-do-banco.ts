import type { PrivatePostgres } from './postgres';
import type { SpawnedService } from './process';
import { waitFor } from './wait';

/**
 * The database-outage drill of a service run as its own process against a private PostgreSQL:
 * stopped, a write is 503 `banco_indisponivel` with Retry-After and readiness 503; started again,
 * writes and readiness come back; then restarted fast, immediately and by SIGKILL under writes,
 * each answered 2xx or 503, and the process still the same one after each. `escrever` is one write
 * of the service that must succeed (2xx) when the database is up.
 */
export async function ensaiarQuedasDoBanco(o: {
  postgres: PrivatePostgres;
  service: SpawnedService;
  url: string;
  escrever: () => Promise<Response>;
}): Promise<void> {
  const aceita = async () => (await o.escrever()).ok;
  const prontidao = async () => (await fetch(`${o.url}/saude/prontidao`)).status;
  const situacao = () =>
    o.service.child.exitCode === null && o.service.child.signalCode === null ? 'vivo' : o.service.output();

  expect(await aceita()).toBe(true);
  await o.postgres.stop('fast');
  const fora = await o.escrever();
  expect({ status: fora.status, codigo: ((await fora.json()) as { codigo: string }).codigo }).toEqual({
    status: 503,
    codigo: 'banco_indisponivel',
  });
  expect(Number(fora.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await prontidao()).toBe(503);
  await o.postgres.start();
  await waitFor(aceita, { timeoutMs: 30_000, what: 'a write accepted again' });
  await waitFor(async () => (await prontidao()) === 200, { timeoutMs: 30_000, what: 'readiness 200' });

  for (const modo of ['fast', 'immediate', 'kill'] as const) {
    const carga = Array.from({ length: 10 }, () => o.escrever());
    await o.postgres.restart(modo);
    for (const resposta of await Promise.all(carga))
      expect({ modo, status: resposta.ok ? 'ok' : resposta.status }).toEqual({
        modo,
        status: resposta.ok ? 'ok' : 503,
      });
    await waitFor(aceita, { timeoutMs: 30_000, what: `a write accepted after a ${modo} restart` });
    expect({ modo, situacao: situacao() }).toEqual({ modo, situacao: 'vivo' });
  }
}

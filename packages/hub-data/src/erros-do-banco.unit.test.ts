import fs from 'node:fs';
import { createServer } from 'node:net';
import { createDb } from './index';

/** A port of 127.0.0.1 where nothing listens: the database is down. */
async function portaFechada(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// Prisma's default error format quotes the code that made a failing query: at every error it reads
// the calling file whole (a service's bundle is 9 MB) and splits it into lines, on the event loop.
// With the database down every request fails a query, and hub-api answered nothing, not even its
// readiness (docs/benchmarks.md, "Operator drill").
it('When the database is down, then a failing query reads no source file to quote it', async () => {
  const db = createDb(`postgresql://postgres@127.0.0.1:${await portaFechada()}/nada`);
  try {
    // The first query loads what Prisma loads once; the second is what every request pays.
    await expect(db.aplicativo.findUnique({ where: { id: '00000000-0000-0000-0000-000000000000' } })).rejects.toThrow();
    const leituras = jest.spyOn(fs, 'readFileSync');
    try {
      const erro = await db.aplicativo
        .findUnique({ where: { id: '00000000-0000-0000-0000-000000000000' } })
        .catch((error: unknown) => error);
      expect((erro as { code?: string }).code).toBe('P1001');
      expect(leituras.mock.calls.map(([arquivo]) => String(arquivo))).toEqual([]);
    } finally {
      leituras.mockRestore();
    }
  } finally {
    await db.$disconnect();
  }
});

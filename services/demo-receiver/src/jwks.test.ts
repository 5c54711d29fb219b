import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createJwksSource } from './jwks';

let server: Server;
let url: string;
let hits = 0;
let answer: { status: number; body: string };
beforeEach(async () => {
  hits = 0;
  answer = { status: 200, body: JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'one', kid: 'k1' }] }) };
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
});
afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('hub JWKS source', () => {
  it('When asked many times at once, then it fetches once and serves the cache after', async () => {
    const source = createJwksSource({ url });
    const all = await Promise.all([source.current(), source.current(), source.current()]);
    await source.current();
    expect(hits).toBe(1);
    expect(all[0]!.keys[0]!.kid).toBe('k1');
  });

  it('When the cache is older than its maximum age, then it is fetched again; if that fails, the cached keys stay', async () => {
    let clock = 0;
    const warnings: string[] = [];
    const source = createJwksSource({ url, maxAgeMs: 1000, now: () => clock, onWarning: (m) => warnings.push(m) });
    await source.current();
    clock = 1500;
    answer.body = JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'two', kid: 'k2' }] });
    expect((await source.current()).keys[0]!.kid).toBe('k2');
    clock = 3000;
    answer.status = 500;
    expect((await source.current()).keys[0]!.kid).toBe('k2');
    expect(warnings).toEqual(['could not refresh the hub JWKS; keeping the cached keys']);
  });

  it('When unknown keys ask for refetches, then it fetches at most once per interval', async () => {
    let clock = 0;
    const source = createJwksSource({ url, refetchIntervalMs: 30_000, now: () => clock });
    await source.current();
    expect(await source.refetchForUnknownKey()).toBeDefined();
    clock = 29_999;
    expect(await source.refetchForUnknownKey()).toBeUndefined();
    clock = 30_000;
    expect(await source.refetchForUnknownKey()).toBeDefined();
    expect(hits).toBe(3);
  });

  it('When the answer is not a JWKS, then current() rejects naming the URL', async () => {
    answer.body = '{"nope":true}';
    await expect(createJwksSource({ url }).current()).rejects.toThrow(`the hub JWKS at ${url} is not a JWKS`);
  });
});

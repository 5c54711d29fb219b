import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addKey, generateKey, type KeySet, publicJwks } from './keys';
import { PublishedKeys } from './published';

// A real HTTP server stands for hub-api's GET /.well-known/jwks.json; what it serves is set per test.
let served: { status: number; body: string };
let reads = 0;
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((_req, res) => {
    reads++;
    res.writeHead(served.status, { 'content-type': 'application/json' }).end(served.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  reads = 0;
});

const serve = (set: KeySet) => {
  served = { status: 200, body: JSON.stringify(publicJwks(set)) };
};

describe('PublishedKeys', () => {
  it('When every active key of the signer is in the JWKS, then the signer is published and the answer is reused', async () => {
    const set: KeySet = { keys: [generateKey()] };
    serve(set);
    const published = new PublishedKeys(url);
    expect(await published.check(set)).toMatchObject({ published: true, missing: [] });
    await published.check(set);
    expect(reads).toBe(1);
  });

  it('When the signer holds a key of its own (another data directory), then it is not published and the kid is named', async () => {
    const hub: KeySet = { keys: [generateKey()] };
    const own: KeySet = { keys: [generateKey()] };
    serve(hub);
    const check = await new PublishedKeys(url).check(own);
    expect(check).toMatchObject({ published: false, missing: [own.keys[0]!.kid] });
  });

  it('When a kid is published with another public key, then that key counts as missing', async () => {
    const set: KeySet = { keys: [generateKey()] };
    const forged = publicJwks({ keys: [generateKey()] });
    forged.keys[0]!.kid = set.keys[0]!.kid;
    served = { status: 200, body: JSON.stringify(forged) };
    expect(await new PublishedKeys(url).check(set)).toMatchObject({ published: false, missing: [set.keys[0]!.kid] });
  });

  it('When the JWKS cannot be read, then the signer is not published and the error says why', async () => {
    const set: KeySet = { keys: [generateKey()] };
    served = { status: 503, body: '{}' };
    expect(await new PublishedKeys(url).check(set)).toMatchObject({
      published: false,
      error: expect.stringMatching(/503/),
    });
    served = { status: 200, body: '{"chaves":[]}' };
    expect(await new PublishedKeys(url).check(set)).toMatchObject({ error: expect.stringMatching(/not a JWKS/) });
  });

  it('When a key is added by rotation before the hub publishes it, then the signer is not ready until it does', async () => {
    const set: KeySet = { keys: [generateKey()] };
    serve(set);
    const published = new PublishedKeys(url, { retryMs: 0 });
    expect((await published.check(set)).published).toBe(true);
    const rotated = addKey(set).set;
    // The old answer is not reused for another set of active keys.
    expect((await published.check(rotated)).published).toBe(false);
    serve(rotated);
    expect((await published.check(rotated)).published).toBe(true);
  });
});

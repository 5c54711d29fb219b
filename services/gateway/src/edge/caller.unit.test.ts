import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { TokenVerifier } from '@hub/auth';
import { unauthorized } from '@hub/http';
import { createCallerIdentifier } from './caller';

/** A token-shaped string with these claims (the fake verifier below reads them back). */
const tokenWith = (claims: Record<string, unknown>) =>
  `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

/** Unit tests of the cache rule: the verifier is a counting fake that accepts claims marked valid. */
function countingVerifier() {
  const calls: string[] = [];
  const check = async (token: string) => {
    calls.push(token);
    const claims = claimsOf(token);
    if (!claims.valid) throw unauthorized('the token is not valid', 'token_invalido');
    return claims;
  };
  const verifier: TokenVerifier = {
    user: async (token) => ({ ...(await check(token)), name: '', master: false }),
    application: check,
  };
  return { verifier, calls };
}

describe('caller identification (unit)', () => {
  let clock = 0;
  const now = () => clock;
  const inAnHour = () => Math.floor(clock / 1000) + 3600;
  beforeEach(() => {
    clock = 1_700_000_000_000;
  });

  it('When a user or an application token is valid, then the caller is the e-mail (lower case) or the client_id', async () => {
    const { verifier } = countingVerifier();
    const identify = createCallerIdentifier(verifier, { ttlMs: 60_000, refusedTtlMs: 5_000, now });
    const user = tokenWith({ valid: true, typ: 'usuario', sub: 'u1', email: 'Ana@Empresa.com.br', exp: inAnHour() });
    const app = tokenWith({ valid: true, typ: 'aplicativo', sub: 'loja', exp: inAnHour() });
    await expect(identify(`Bearer ${user}`)).resolves.toEqual({ tipo: 'usuario', id: 'ana@empresa.com.br' });
    await expect(identify(`Bearer ${app}`)).resolves.toEqual({ tipo: 'aplicativo', id: 'loja' });
  });

  it('When there is no Bearer token or it is refused, then nobody is named', async () => {
    const { verifier } = countingVerifier();
    const identify = createCallerIdentifier(verifier, { ttlMs: 60_000, refusedTtlMs: 5_000, now });
    await expect(identify(undefined)).resolves.toBeUndefined();
    await expect(identify('Basic YTpi')).resolves.toBeUndefined();
    await expect(identify(`Bearer ${tokenWith({ typ: 'usuario', email: 'x@y' })}`)).resolves.toBeUndefined();
  });

  it('When a verified token comes again within the cache time, then it is not verified again', async () => {
    const { verifier, calls } = countingVerifier();
    const identify = createCallerIdentifier(verifier, { ttlMs: 60_000, refusedTtlMs: 5_000, now });
    const header = `Bearer ${tokenWith({ valid: true, typ: 'aplicativo', sub: 'loja', exp: inAnHour() })}`;
    await identify(header);
    clock += 59_000;
    await identify(header);
    expect(calls).toHaveLength(1);
    clock += 1_000;
    await identify(header);
    expect(calls).toHaveLength(2);
  });

  it('When many requests bring the same new token at once, then it is verified once', async () => {
    const { verifier, calls } = countingVerifier();
    const identify = createCallerIdentifier(verifier, { ttlMs: 60_000, refusedTtlMs: 5_000, now });
    const header = `Bearer ${tokenWith({ valid: true, typ: 'aplicativo', sub: 'loja', exp: inAnHour() })}`;
    await Promise.all(Array.from({ length: 50 }, () => identify(header)));
    expect(calls).toHaveLength(1);
  });

  it('When the token expires before the cache time, then it is not remembered past its expiry', async () => {
    const { verifier, calls } = countingVerifier();
    const identify = createCallerIdentifier(verifier, { ttlMs: 60_000, refusedTtlMs: 5_000, now });
    const exp = Math.floor(clock / 1000) + 10;
    const header = `Bearer ${tokenWith({ valid: true, typ: 'aplicativo', sub: 'loja', exp })}`;
    await identify(header);
    clock += 10_000;
    await identify(header);
    expect(calls).toHaveLength(2);
  });

  it('When a token is refused, then the refusal is remembered for refusedTtlMs only: a flood of it is verified once', async () => {
    const { verifier, calls } = countingVerifier();
    const identify = createCallerIdentifier(verifier, { ttlMs: 60_000, refusedTtlMs: 5_000, now });
    const header = `Bearer ${tokenWith({ typ: 'aplicativo', sub: 'loja', exp: inAnHour() })}`;
    for (let i = 0; i < 50; i += 1) expect(await identify(header)).toBeUndefined();
    expect(calls).toHaveLength(1);
    clock += 5_001;
    expect(await identify(header)).toBeUndefined();
    expect(calls).toHaveLength(2);
  });

  it('When the cache is full, then the oldest token is dropped first', async () => {
    const { verifier, calls } = countingVerifier();
    const identify = createCallerIdentifier(verifier, { ttlMs: 60_000, refusedTtlMs: 5_000, now, maxEntries: 2 });
    const header = (sub: string) => `Bearer ${tokenWith({ valid: true, typ: 'aplicativo', sub, exp: inAnHour() })}`;
    await identify(header('a'));
    await identify(header('b'));
    await identify(header('c'));
    await identify(header('c'));
    await identify(header('b'));
    expect(calls).toHaveLength(3);
    await identify(header('a'));
    expect(calls).toHaveLength(4);
  });
});

describe('caller identification under a flood of large forged tokens (unit)', () => {
  it('When thousands of distinct 15 KB Authorization headers are refused, then the cache keeps a few bytes per header, not the headers', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // Not the counting fake: its list of calls would keep every token itself.
    const refuse = async () => {
      throw unauthorized('the token is not valid', 'token_invalido');
    };
    const identify = createCallerIdentifier(
      { user: refuse, application: refuse },
      { ttlMs: 60_000, refusedTtlMs: 5_000 },
    );
    gc();
    const antes = process.memoryUsage().heapUsed;
    // What a client could send in seconds, over its budget even (the caller is known before the budget is counted).
    for (let i = 0; i < 2_000; i += 1)
      await identify(
        `Bearer a.${Buffer.from(JSON.stringify({ n: i, p: 'x'.repeat(11_000) })).toString('base64url')}.b`,
      );
    gc();
    const guardados = process.memoryUsage().heapUsed - antes;
    // The headers themselves: 30 MB (and 150 MB at the 10,000 entries the cache holds).
    expect(guardados).toBeLessThan(5 * 1024 * 1024);
    // The cache is still in use, so the collection above could not take it whole.
    await expect(identify('Bearer a.b.c')).resolves.toBeUndefined();
  });
});

describe('caller identification of a long token (unit)', () => {
  it('When a valid token longer than a cache key comes again, then it is remembered by its digest, and an altered one is not taken for it', async () => {
    const { verifier, calls } = countingVerifier();
    const identify = createCallerIdentifier(verifier, { ttlMs: 60_000, refusedTtlMs: 5_000 });
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const longo = tokenWith({ valid: true, typ: 'aplicativo', sub: 'loja', exp, pad: 'x'.repeat(5_000) });
    await expect(identify(`Bearer ${longo}`)).resolves.toEqual({ tipo: 'aplicativo', id: 'loja' });
    await expect(identify(`Bearer ${longo}`)).resolves.toEqual({ tipo: 'aplicativo', id: 'loja' });
    expect(calls).toHaveLength(1);
    // The fake does not check signatures: that it is asked again is what shows the altered one was not found.
    await identify(`Bearer ${longo.slice(0, -1)}x`);
    expect(calls).toHaveLength(2);
  });
});

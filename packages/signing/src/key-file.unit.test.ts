import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { calculateJwkThumbprint } from 'jose';
import { KeyStore, loadOrCreateKeySet, MissingKeyFileError, readKeyFile, writeKeyFile } from './key-file';
import { addKey, generateKey, KeySetError, parseKeySet, publicJwks, removeKey, retireKey } from './keys';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hub-keys-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('key file', () => {
  it('When no key file exists, then one active key is created with mode 0600 and loaded again unchanged', async () => {
    const file = path.join(dir, 'nested', 'signing-keys.json');
    const first = await loadOrCreateKeySet({ file });
    expect(first.created).toBe(true);
    expect(first.set.keys).toHaveLength(1);
    expect(first.set.keys[0]!.state).toBe('active');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const second = await loadOrCreateKeySet({ file });
    expect(second.created).toBe(false);
    expect(second.set).toEqual(first.set);
  });

  it('When the key file is missing and may not be created, then the store refuses to open and writes nothing', async () => {
    const file = path.join(dir, 'nested', 'signing-keys.json');
    await expect(KeyStore.open({ file }, { create: false })).rejects.toThrow(MissingKeyFileError);
    await expect(stat(path.dirname(file))).rejects.toThrow(/ENOENT/);
  });

  it('When processes start together, then they agree on one key and none reads the file half written', async () => {
    // Many rounds of six at once: the window between one creating the file and another reading it
    // is short, so a single pair met it only on a loaded machine.
    for (let round = 0; round < 40; round += 1) {
      const file = path.join(dir, `signing-keys-${round}.json`);
      const loaded = await Promise.all(Array.from({ length: 6 }, () => loadOrCreateKeySet({ file })));
      for (const other of loaded) expect(other.set).toEqual(loaded[0]!.set);
      expect(loaded.filter((l) => l.created)).not.toHaveLength(0);
    }
    // 240 key files made and read: over 30 s once, beside the integration tests on a loaded machine.
  }, 120_000);

  it('When HUB_SIGNING_KEYS is given, then it is used and no file is written', async () => {
    const file = path.join(dir, 'signing-keys.json');
    const json = JSON.stringify({ keys: [generateKey()] });
    const loaded = await loadOrCreateKeySet({ file, json });
    expect(loaded.origin).toBe('env');
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  it('When the kid is the RFC 7638 thumbprint, then jose computes the same', async () => {
    const key = generateKey();
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: key.private_jwk.x }));
  });

  it('When the key set is broken, then parsing says what is wrong', () => {
    const key = generateKey();
    expect(() => parseKeySet('{', 'x')).toThrow(KeySetError);
    expect(() => parseKeySet('{"keys":[]}', 'x')).toThrow(/no active key/);
    expect(() => parseKeySet(JSON.stringify({ keys: [{ ...key, kid: 'other' }] }), 'x')).toThrow(/thumbprint/);
    expect(() => parseKeySet(JSON.stringify({ keys: [{ ...key, state: 'sleeping' }] }), 'x')).toThrow(/state/);
    const other = generateKey();
    const mixed = { ...key, private_jwk: { ...key.private_jwk, x: other.private_jwk.x } };
    expect(() => parseKeySet(JSON.stringify({ keys: [mixed] }), 'x')).toThrow(/does not belong/);
    expect(() => parseKeySet(JSON.stringify({ keys: [key, key] }), 'x')).toThrow(/twice/);
  });

  it('When a key is added, retired and removed, then the rules of rotation hold', () => {
    const start = { keys: [generateKey()] };
    const old = start.keys[0]!.kid;
    expect(() => retireKey(start, old)).toThrow(/only active key/);
    expect(() => removeKey(start, old)).toThrow(/retire it first/);
    const { set: both, key } = addKey(start);
    const retired = retireKey(both, old);
    expect(retired.keys.find((k) => k.kid === old)).toMatchObject({ state: 'retired', retired_at: expect.any(String) });
    expect(publicJwks(retired).keys).toHaveLength(2);
    expect(() => retireKey(retired, old)).toThrow(/already retired/);
    const removed = removeKey(retired, old);
    expect(removed.keys.map((k) => k.kid)).toEqual([key.kid]);
    expect(() => removeKey(removed, 'nope')).toThrow(/no key/);
  });

  it('When the JWKS is built, then it holds public members only', () => {
    const jwks = publicJwks(addKey({ keys: [generateKey()] }).set);
    for (const jwk of jwks.keys) {
      expect(Object.keys(jwk).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', use: 'sig', alg: 'EdDSA' });
    }
  });
});

describe('KeyStore', () => {
  it('When the key file is changed by the CLI, then a running store picks the change up', async () => {
    const file = path.join(dir, 'signing-keys.json');
    const store = await KeyStore.open({ file }, { create: true, reloadIntervalMs: 0 });
    const [first] = await store.signers();
    const { set } = addKey((await readKeyFile(file))!);
    await writeKeyFile(file, set);
    expect((await store.signers()).map((s) => s.kid)).toEqual([set.keys[1]!.kid, first!.kid]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('When signersNow is asked, then it gives the keys at once until a look at the file is due, and none after', async () => {
    const file = path.join(dir, 'signing-keys.json');
    const store = await KeyStore.open({ file }, { create: true, reloadIntervalMs: 60_000 });
    const [first] = await store.signers();
    expect(store.signersNow()?.map((s) => s.kid)).toEqual([first!.kid]);
    // A new key written meanwhile is not seen before the interval (as signers() would not see it).
    const { set } = addKey((await readKeyFile(file))!);
    await writeKeyFile(file, set);
    expect(store.signersNow()?.map((s) => s.kid)).toEqual([first!.kid]);
    const due = await KeyStore.open({ file }, { create: false, reloadIntervalMs: 0 });
    expect(due.signersNow()).toBeUndefined();
    expect((await due.signers()).map((s) => s.kid)).toEqual([set.keys[1]!.kid, first!.kid]);
    const fromEnv = await KeyStore.open(
      { file: path.join(dir, 'none.json'), json: JSON.stringify(set) },
      { create: false, reloadIntervalMs: 0 },
    );
    expect(fromEnv.signersNow()).toHaveLength(2);
  });

  it('When the key file becomes unreadable garbage, then the store keeps the last good keys and warns', async () => {
    const file = path.join(dir, 'signing-keys.json');
    const warnings: string[] = [];
    const store = await KeyStore.open(
      { file },
      { create: true, reloadIntervalMs: 0, onWarning: (m) => warnings.push(m) },
    );
    const before = await store.jwks();
    await writeFile(file, 'not json', { mode: 0o600 });
    expect(await store.jwks()).toEqual(before);
    expect(warnings.join('\n')).toMatch(/keeping the current signing keys/);
  });

  it('When the key file is readable by others, then loading warns', async () => {
    const file = path.join(dir, 'signing-keys.json');
    await writeFile(file, JSON.stringify({ keys: [generateKey()] }), { mode: 0o644 });
    const warnings: string[] = [];
    await loadOrCreateKeySet({ file }, (m) => warnings.push(m));
    expect(warnings[0]).toMatch(/chmod 600/);
    expect(JSON.parse(await readFile(file, 'utf8')).keys).toHaveLength(1);
  });
});

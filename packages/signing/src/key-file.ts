import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { generateKey, type KeySet, parseKeySet, publicJwks, signersOf } from './keys';
import type { Signer } from './sign';

/** Where the keys come from: HUB_SIGNING_KEYS (the JSON itself) wins over the key file. */
export interface KeySource {
  file: string;
  json?: string;
}

export type KeyOrigin = 'env' | 'file';

/** The key file, or undefined when it does not exist. */
export async function readKeyFile(file: string): Promise<KeySet | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return parseKeySet(text, file);
}

/**
 * Writes the key file atomically (a 0600 temporary file in the same folder, then rename), so a
 * reader never sees half a file and the private keys are never readable by others. `exclusive`
 * creates it only if it does not exist (EEXIST otherwise), still whole: the temporary file is
 * linked to the name, which fails when the name exists, so a process starting beside the one that
 * creates it reads either no file or the whole of it (an `open(…, 'wx')` at the name showed the
 * other process an empty file between the open and the write).
 */
export async function writeKeyFile(file: string, set: KeySet, options: { exclusive?: boolean } = {}): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const text = `${JSON.stringify(set, null, 2)}\n`;
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  let kept = false;
  try {
    await chmod(temporary, 0o600);
    if (options.exclusive) await link(temporary, file);
    else {
      await rename(temporary, file);
      kept = true;
    }
  } finally {
    // Linked or not, the temporary name goes; renamed, it is already gone.
    if (!kept) await unlink(temporary).catch(() => undefined);
  }
}

/** The key file named by a KeySource does not exist, and it may not be created. */
export class MissingKeyFileError extends Error {
  override name = 'MissingKeyFileError';
}

/**
 * Loads the keys: from `json` when given (never written back), else from the key file. A missing
 * file is created with one fresh active key unless `create` is false (outside a developer's
 * machine keys are made on purpose, never on the spot), which is a MissingKeyFileError. Two
 * processes starting together agree on one file (exclusive create).
 */
export async function loadOrCreateKeySet(
  source: KeySource,
  onWarning: (message: string) => void = () => undefined,
  { create = true }: { create?: boolean } = {},
): Promise<{ set: KeySet; origin: KeyOrigin; created: boolean }> {
  if (source.json?.trim()) return { set: parseKeySet(source.json, 'HUB_SIGNING_KEYS'), origin: 'env', created: false };
  const existing = await readKeyFile(source.file);
  if (existing) {
    await warnIfExposed(source.file, onWarning);
    return { set: existing, origin: 'file', created: false };
  }
  if (!create) throw new MissingKeyFileError(`the key file ${source.file} does not exist`);
  try {
    await writeKeyFile(source.file, { keys: [generateKey()] }, { exclusive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const created = await readKeyFile(source.file);
  if (!created) throw new Error(`the key file ${source.file} vanished while it was being created`);
  return { set: created, origin: 'file', created: true };
}

async function warnIfExposed(file: string, onWarning: (message: string) => void): Promise<void> {
  const { mode } = await stat(file);
  if (mode & 0o077)
    onWarning(`the key file ${file} is readable by other users (mode ${(mode & 0o777).toString(8)}); chmod 600 it`);
}

export interface KeyStoreOptions {
  /** Whether a missing key file is created with a new key (a developer's machine only). */
  create: boolean;
  /** How often, at most, the key file is checked for changes. Default 5 s. */
  reloadIntervalMs?: number;
  onWarning?: (message: string) => void;
  onReload?: (set: KeySet) => void;
}

/**
 * The keys of a running process. A key file changed by `hub-keys` is picked up within
 * `reloadIntervalMs`, without a restart; a file that cannot be read or parsed keeps the last good
 * keys (and warns). Keys from HUB_SIGNING_KEYS never change while running.
 */
export class KeyStore {
  private signersCache: Signer[];
  private checkedAt = Date.now();
  private stamp?: string;
  private reloading?: Promise<void>;

  private constructor(
    private readonly source: KeySource,
    readonly origin: KeyOrigin,
    private set: KeySet,
    private readonly options: KeyStoreOptions,
  ) {
    this.signersCache = signersOf(set);
  }

  static async open(source: KeySource, options: KeyStoreOptions): Promise<KeyStore & { created: boolean }> {
    const { set, origin, created } = await loadOrCreateKeySet(source, options.onWarning, { create: options.create });
    const store = new KeyStore(source, origin, set, options);
    if (origin === 'file') store.stamp = await fileStamp(source.file).catch(() => undefined);
    return Object.assign(store, { created });
  }

  async keySet(): Promise<KeySet> {
    await this.refresh();
    return this.set;
  }

  /** The active keys, newest first: each signs every delivery. */
  async signers(): Promise<Signer[]> {
    await this.refresh();
    return this.signersCache;
  }

  /**
   * The signers without waiting, when no look at the key file is due (what `signers()` would give
   * at once); undefined when one is, and then `signers()` does it. For a caller that signs per
   * message (the delivery worker): no promise and no turn of the event loop per signature.
   */
  signersNow(): Signer[] | undefined {
    return this.origin !== 'file' || !this.checkDue() ? this.signersCache : undefined;
  }

  private checkDue(): boolean {
    return Date.now() - this.checkedAt >= (this.options.reloadIntervalMs ?? 5_000);
  }

  /** The public keys (active and retired) for GET /.well-known/jwks.json. */
  async jwks(): Promise<ReturnType<typeof publicJwks>> {
    return publicJwks(await this.keySet());
  }

  /** Checks the key file now, whatever the interval. */
  async reload(): Promise<void> {
    this.checkedAt = 0;
    await this.refresh();
  }

  private async refresh(): Promise<void> {
    if (this.origin !== 'file' || !this.checkDue()) return;
    this.reloading ??= this.check().finally(() => {
      this.checkedAt = Date.now();
      this.reloading = undefined;
    });
    await this.reloading;
  }

  private async check(): Promise<void> {
    try {
      const stamp = await fileStamp(this.source.file);
      if (stamp === this.stamp) return;
      const set = await readKeyFile(this.source.file);
      if (!set) throw new Error(`the key file ${this.source.file} is gone`);
      this.set = set;
      this.signersCache = signersOf(set);
      this.stamp = stamp;
      await warnIfExposed(this.source.file, this.options.onWarning ?? (() => undefined));
      this.options.onReload?.(set);
    } catch (error) {
      this.options.onWarning?.(`keeping the current signing keys: ${(error as Error).message}`);
    }
  }
}

async function fileStamp(file: string): Promise<string> {
  const info = await stat(file, { bigint: true });
  return `${info.ino}:${info.size}:${info.mtimeNs}`;
}

// Rotation of the hub's delivery-signing keys (docs/keys.md):
//   npx tsx infra/scripts/hub-keys.ts list | jwks | add | retire <kid> | remove <kid>
// `jwks` prints the public keys alone (the JWKS hub-api serves), for HUB_SIGNING_JWKS.
// Works on HUB_SIGNING_KEYS_FILE (default .data/hub/signing-keys.json); running services pick the
// change up within seconds. With HUB_SIGNING_KEYS set, only `list` works: change that secret instead.
import {
  addKey,
  KeySetError,
  loadOrCreateKeySet,
  readKeyFile,
  publicJwks,
  removeKey,
  retireKey,
  signersOf,
  writeKeyFile,
  type KeySet,
} from '../../packages/signing/src/index';

const file = process.env.HUB_SIGNING_KEYS_FILE ?? '.data/hub/signing-keys.json';
const fromEnv = process.env.HUB_SIGNING_KEYS?.trim();
const usage = 'usage: npx tsx infra/scripts/hub-keys.ts list | jwks | add | retire <kid> | remove <kid>';

function print(set: KeySet, origin: string): void {
  const signing = new Set(signersOf(set).map((s) => s.kid));
  process.stdout.write(`keys of ${origin} (active keys sign every delivery; all are in the JWKS)\n`);
  for (const key of set.keys) {
    const since = key.retired_at ? `retired ${key.retired_at}` : `created ${key.created_at}`;
    process.stdout.write(
      `  ${key.kid}  ${key.state.padEnd(7)}  ${signing.has(key.kid) ? 'signs' : '     '}  ${since}\n`,
    );
  }
}

async function current(): Promise<KeySet> {
  const set = await readKeyFile(file);
  if (!set) throw new KeySetError(`no key file at ${file}; run "add" to create one, or start hub-api once`);
  return set;
}

async function main(argv: string[]): Promise<void> {
  const [command, kid] = argv;
  if (command === 'list') {
    const { set, origin } = fromEnv
      ? await loadOrCreateKeySet({ file, json: fromEnv })
      : { set: await current(), origin: 'file' };
    print(set, origin === 'env' ? 'HUB_SIGNING_KEYS' : file);
    return;
  }
  if (command === 'jwks') {
    const { set } = fromEnv ? await loadOrCreateKeySet({ file, json: fromEnv }) : { set: await current() };
    process.stdout.write(`${JSON.stringify(publicJwks(set))}\n`);
    return;
  }
  if (!['add', 'retire', 'remove'].includes(command ?? '')) throw new KeySetError(usage);
  if (fromEnv)
    throw new KeySetError('HUB_SIGNING_KEYS is set: the keys live in that secret; change it there (see docs/keys.md)');
  if (command === 'add') {
    const existing = await readKeyFile(file);
    const { set, key } = existing
      ? addKey(existing)
      : { set: (await loadOrCreateKeySet({ file })).set, key: undefined };
    if (existing) await writeKeyFile(file, set);
    const added = key ?? set.keys[0]!;
    process.stdout.write(`added ${added.kid}: it signs from now on, together with the other active keys\n`);
    print(set, file);
    return;
  }
  if (!kid) throw new KeySetError(usage);
  const set = command === 'retire' ? retireKey(await current(), kid) : removeKey(await current(), kid);
  await writeKeyFile(file, set);
  process.stdout.write(
    command === 'retire'
      ? `retired ${kid}: it no longer signs and stays in the JWKS\n`
      : `removed ${kid} from the JWKS\n`,
  );
  print(set, file);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${error instanceof KeySetError ? error.message : String(error)}\n`);
  process.exit(1);
});

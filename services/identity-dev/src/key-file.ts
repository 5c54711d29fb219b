import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateSigningKey, type SigningKey, signingKeyFrom } from '@hub/identity-stand-in';
import type { JWK } from 'jose';

/** The key of the key file, created (mode 0600) on first start. */
export async function loadOrCreateKey(file: string): Promise<SigningKey> {
  try {
    return await signingKeyFrom(JSON.parse(await readFile(file, 'utf8')) as JWK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const { privateJwk } = await generateSigningKey();
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(privateJwk), { mode: 0o600, flag: 'wx' }).catch(async (error) => {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  });
  return signingKeyFrom(JSON.parse(await readFile(file, 'utf8')) as JWK);
}

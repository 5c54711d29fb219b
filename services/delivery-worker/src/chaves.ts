import { existsSync } from 'node:fs';
import { ConfigError } from '@hub/config';
import type { Logger } from '@hub/log';
import { KeyStore } from '@hub/signing';
import type { DeliveryWorkerConfig } from './config';

/**
 * Where the signing keys come from: the same source hub-api publishes its JWKS from. The worker
 * never creates a key (a key made here would sign with something no subscriber can verify).
 */
export function keySource(config: DeliveryWorkerConfig): { file: string; json?: string } {
  if (!config.HUB_SIGNING_KEYS?.trim() && !existsSync(config.HUB_SIGNING_KEYS_FILE))
    throw new ConfigError(
      `invalid configuration:\n  HUB_SIGNING_KEYS_FILE: the key file ${config.HUB_SIGNING_KEYS_FILE} does not exist and ` +
        'HUB_SIGNING_KEYS is not set; the delivery worker signs with the keys hub-api publishes and never creates ' +
        'one: point it at the key file of hub-api, or start hub-api first on a developer machine (docs/keys.md)',
    );
  return { file: config.HUB_SIGNING_KEYS_FILE, json: config.HUB_SIGNING_KEYS };
}

/**
 * A readiness check: every key the worker signs with is in the JWKS hub-api publishes, or
 * subscribers could not verify its deliveries (a key file that differs from hub-api's). The answer
 * is reused for 30 s.
 */
export function chavesPublicadas(keys: KeyStore, hubApiUrl: string): () => Promise<void> {
  const url = new URL('/.well-known/jwks.json', hubApiUrl);
  let visto: { at: number; kids: Set<string> } | undefined;
  return async () => {
    if (!visto || Date.now() - visto.at > 30_000) {
      const resposta = await fetch(url, { signal: AbortSignal.timeout(1500) });
      if (!resposta.ok) throw new Error(`${url} answered ${resposta.status}`);
      const jwks = (await resposta.json()) as { keys?: { kid?: string }[] };
      visto = { at: Date.now(), kids: new Set((jwks.keys ?? []).map((k) => String(k.kid))) };
    }
    const ausentes = (await keys.signers()).filter((s) => !visto!.kids.has(s.kid)).map((s) => s.kid);
    if (ausentes.length > 0) {
      visto = undefined;
      throw new Error(`signing keys not in the published JWKS (${url}): ${ausentes.join(', ')}`);
    }
  };
}

/** The signing keys, reloaded every HUB_SIGNING_KEYS_RELOAD; never created here (`keySource`). */
export function abrirChaves(config: DeliveryWorkerConfig, logger: Logger): Promise<KeyStore> {
  return KeyStore.open(keySource(config), {
    create: false,
    reloadIntervalMs: config.HUB_SIGNING_KEYS_RELOAD,
    onWarning: (message) => logger.warn(message),
    onReload: (set) => logger.info({ kids: set.keys.map((k) => `${k.kid}:${k.state}`) }, 'signing keys reloaded'),
  });
}

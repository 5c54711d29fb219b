/** Header names of a signed delivery (Standard Webhooks, asymmetric form `v1a`). */
export const WEBHOOK_ID = 'webhook-id';
export const WEBHOOK_TIMESTAMP = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE = 'webhook-signature';
export const WEBHOOK_KEY_ID = 'webhook-key-id';

/** Version tag of an Ed25519 signature in `webhook-signature`. */
export const SIGNATURE_VERSION = 'v1a';

/**
 * Request headers as any runtime gives them: a fetch `Headers` (or anything with `get`), or a plain
 * object such as Node's `req.headers` (names in any case; repeated values as an array).
 */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export function readHeader(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = name in record ? name : Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

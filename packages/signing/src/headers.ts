/** Header names of a signed delivery (Standard Webhooks, asymmetric form `v1a`). */
export const WEBHOOK_ID = 'webhook-id';
export const WEBHOOK_TIMESTAMP = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE = 'webhook-signature';
export const WEBHOOK_KEY_ID = 'webhook-key-id';

/** Version tag of an Ed25519 signature in `webhook-signature`. */
export const SIGNATURE_VERSION = 'v1a';

/** A type alias, not an interface, so it can be passed where any header record is accepted. */
export type WebhookHeaders = {
  [WEBHOOK_ID]: string;
  [WEBHOOK_TIMESTAMP]: string;
  /** `v1a,<base64>` per signing key, space separated. */
  [WEBHOOK_SIGNATURE]: string;
  /** The `kid`s of those keys, in the same order, space separated. */
  [WEBHOOK_KEY_ID]: string;
};

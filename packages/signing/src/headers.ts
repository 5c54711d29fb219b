// The header names themselves (WEBHOOK_ID…) come from @hub/webhook-verifier, through ./verify.

/** What signWebhook gives: a type alias, not an interface, so it fits where any header record is accepted. */
export type WebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  /** `v1a,<base64>` per signing key, space separated. */
  'webhook-signature': string;
  /** The `kid`s of those keys, in the same order, space separated. */
  'webhook-key-id': string;
};

import { type KeyObject, sign } from 'node:crypto';
import { SIGNATURE_VERSION } from '@hub/webhook-verifier';
import type { WebhookHeaders } from './headers';

/** A private key that signs deliveries, named by the `kid` the JWKS publishes. */
export interface Signer {
  kid: string;
  privateKey: KeyObject;
}

export interface WebhookMessage {
  /** The delivery id: the same on every attempt, so a subscriber can drop repeats. */
  id: string;
  /** The exact bytes that are sent. */
  body: string | Uint8Array;
  /** Unix seconds; now when absent. */
  timestamp?: number;
}

/** The bytes that are signed: `{id}.{timestamp}.{body}`. */
export function signedContent(id: string, timestamp: number, body: string | Uint8Array): Buffer {
  const prefix = `${id}.${timestamp}.`;
  const tamanhoDoPrefixo = Buffer.byteLength(prefix, 'utf8');
  const tamanhoDoCorpo = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  // One buffer written in place: a delivery is signed on every attempt.
  const content = Buffer.allocUnsafe(tamanhoDoPrefixo + tamanhoDoCorpo);
  content.write(prefix, 0, 'utf8');
  if (typeof body === 'string') content.write(body, tamanhoDoPrefixo, 'utf8');
  else content.set(body, tamanhoDoPrefixo);
  return content;
}

/**
 * Signs a delivery with every given key (node:crypto Ed25519), giving the headers to send. During a
 * key rotation two keys sign, so subscribers that still hold only one of them keep verifying.
 */
export function signWebhook(message: WebhookMessage, signers: readonly Signer[]): WebhookHeaders {
  if (signers.length === 0) throw new Error('no signing key is active');
  if (!message.id || /[\s.]/.test(message.id))
    throw new Error('a webhook id must be non-empty, without dots or spaces');
  const timestamp = message.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new Error('a webhook timestamp is whole unix seconds');
  const content = signedContent(message.id, timestamp, message.body);
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signers
      .map((s) => `${SIGNATURE_VERSION},${sign(null, content, s.privateKey).toString('base64')}`)
      .join(' '),
    'webhook-key-id': signers.map((s) => s.kid).join(' '),
  };
}

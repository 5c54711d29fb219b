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
  return conteudo(id, timestamp, body).content;
}

/** signedContent, and where the body starts in it. */
function conteudo(
  id: string,
  timestamp: number,
  body: string | Uint8Array,
): { content: Buffer; inicioDoCorpo: number } {
  const prefix = `${id}.${timestamp}.`;
  const tamanhoDoPrefixo = Buffer.byteLength(prefix, 'utf8');
  const tamanhoDoCorpo = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  // One buffer written in place: a delivery is signed on every attempt.
  const content = Buffer.allocUnsafe(tamanhoDoPrefixo + tamanhoDoCorpo);
  content.write(prefix, 0, 'utf8');
  if (typeof body === 'string') content.write(body, tamanhoDoPrefixo, 'utf8');
  else content.set(body, tamanhoDoPrefixo);
  return { content, inicioDoCorpo: tamanhoDoPrefixo };
}

/**
 * Signs a delivery with every given key (node:crypto Ed25519), giving the headers to send. During a
 * key rotation two keys sign, so subscribers that still hold only one of them keep verifying.
 */
export function signWebhook(message: WebhookMessage, signers: readonly Signer[]): WebhookHeaders {
  const timestamp = conferir(message, signers);
  return cabecalhos(message.id, timestamp, signedContent(message.id, timestamp, message.body), signers);
}

/**
 * signWebhook for a body given as text, encoded once: the signed content (`id.timestamp.body`) is
 * written into one buffer and the body sent is a view of its end, so the bytes signed and the bytes
 * sent are the same memory (the delivery worker signs on every attempt).
 */
export function signWebhookText(
  message: WebhookMessage & { body: string },
  signers: readonly Signer[],
): { headers: WebhookHeaders; body: Buffer } {
  const timestamp = conferir(message, signers);
  const { content, inicioDoCorpo } = conteudo(message.id, timestamp, message.body);
  return { headers: cabecalhos(message.id, timestamp, content, signers), body: content.subarray(inicioDoCorpo) };
}

/** The message's timestamp (now when absent), once its id, timestamp and the signers are checked. */
function conferir(message: WebhookMessage, signers: readonly Signer[]): number {
  if (signers.length === 0) throw new Error('no signing key is active');
  if (!message.id || /[\s.]/.test(message.id))
    throw new Error('a webhook id must be non-empty, without dots or spaces');
  const timestamp = message.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new Error('a webhook timestamp is whole unix seconds');
  return timestamp;
}

function cabecalhos(id: string, timestamp: number, content: Buffer, signers: readonly Signer[]): WebhookHeaders {
  // One key signs outside a rotation: no array to map and join.
  const assinatura = (s: Signer) => `${SIGNATURE_VERSION},${sign(null, content, s.privateKey).toString('base64')}`;
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signers.length === 1 ? assinatura(signers[0]!) : signers.map(assinatura).join(' '),
    'webhook-key-id': signers.length === 1 ? signers[0]!.kid : signers.map((s) => s.kid).join(' '),
  };
}

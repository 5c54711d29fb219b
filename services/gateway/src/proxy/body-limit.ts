import type { IncomingMessage } from 'node:http';
import { AppError } from '@hub/http';

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i;
const UNIT = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 } as const;

/** "512kb", "1mb", "1048576" to bytes (binary units, like express.json's limit). */
export function parseByteSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  if (!match) return undefined;
  const unit = (match[2]?.toLowerCase() ?? 'b') as keyof typeof UNIT;
  return Math.floor(Number(match[1]) * UNIT[unit]);
}

export const bodyTooLarge = (limit: number) =>
  new AppError(413, 'corpo_grande_demais', `the body is larger than the ${limit} bytes the gateway accepts`);

/** The declared length, or undefined when the body is chunked (or absent). */
export function declaredLength(req: IncomingMessage): number | undefined {
  const header = req.headers['content-length'];
  return header === undefined ? undefined : Number(header);
}

export const isChunked = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined;

/**
 * A body read whole, its pieces copied into one buffer as they come (grown by doubling, up to
 * `limit`). Not kept as the pieces themselves: each is an object of its own, of some hundred bytes
 * however few bytes it carries, and a client sending its body a byte per chunk (or per packet)
 * made the gateway hold a hundred times what it sent, 100 MB for a 1 MB chunked body. A body that
 * comes in one piece (a small one, usually) is that piece, not copied.
 */
export class CorpoInteiro {
  /** The only piece so far, as it came. */
  private primeiro: Buffer | undefined = undefined;
  /** The pieces copied, once there is more than one. */
  private buffer: Buffer | undefined = undefined;
  size = 0;
  constructor(
    private readonly limit: number,
    /** The buffer's first size (the declared length, when there is one). */
    private readonly inicial: number,
  ) {}
  /** Adds a piece; false once the body would pass the limit (the piece is then not kept). */
  add(chunk: Buffer): boolean {
    const size = this.size + chunk.length;
    if (size > this.limit) return false;
    if (this.buffer === undefined && this.size === 0) {
      this.primeiro = chunk;
      this.size = size;
      return true;
    }
    if (this.buffer === undefined) {
      this.buffer = Buffer.allocUnsafe(Math.min(this.limit, Math.max(size, this.inicial)));
      this.primeiro!.copy(this.buffer);
      this.primeiro = undefined;
    } else if (size > this.buffer.length) {
      const maior = Buffer.allocUnsafe(Math.min(this.limit, Math.max(size, this.buffer.length * 2)));
      this.buffer.copy(maior, 0, 0, this.size);
      this.buffer = maior;
    }
    chunk.copy(this.buffer, this.size);
    this.size = size;
    return true;
  }
  get body(): Buffer {
    return this.buffer?.subarray(0, this.size) ?? this.primeiro ?? Buffer.alloc(0);
  }
}

/** Bytes of the bodies being read whole at once for one service, and the most it may hold. */
export interface BodyBudget {
  used: number;
  max: number;
}

/** The budget was spent by other bodies read at once: the request is refused, not read on. */
export const BUDGET_SPENT = Symbol('budget spent');

/**
 * Reads a body whole (chunked, or small with its length), counting bytes, so that one over the
 * limit never reaches a service. Resolves with the body, with undefined as soon as it passes the
 * limit, or with BUDGET_SPENT when the bodies read at once would pass `budget` (each byte counted in
 * `budget.used` until `release` is called: clients holding bodies unfinished cannot make the
 * gateway hold more); rejects when the client goes away before its end.
 */
export function readWholeBody(
  req: IncomingMessage,
  limit: number,
  initial: number,
  budget: BodyBudget = { used: 0, max: Number.POSITIVE_INFINITY },
): { body: Promise<Buffer | undefined | typeof BUDGET_SPENT>; release: () => void } {
  let counted = 0;
  const release = () => {
    budget.used -= counted;
    counted = 0;
  };
  const body = new Promise<Buffer | undefined | typeof BUDGET_SPENT>((resolve, reject) => {
    const corpo = new CorpoInteiro(limit, initial);
    const onData = (chunk: Buffer) => {
      if (corpo.size + chunk.length <= limit && budget.used + chunk.length > budget.max) {
        cleanup();
        return resolve(BUDGET_SPENT);
      }
      if (!corpo.add(chunk)) {
        cleanup();
        return resolve(undefined);
      }
      counted += chunk.length;
      budget.used += chunk.length;
    };
    const onEnd = () => {
      cleanup();
      resolve(corpo.body);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onAborted = () => onError(Object.assign(new Error('client aborted the request'), { code: 'ECONNRESET' }));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
  return { body, release };
}

/**
 * After a 413 the rest of the body is read and dropped so the connection stays usable, up to a
 * few times the limit; past that the connection is cut instead of reading on.
 */
export function discardRest(req: IncomingMessage, limit: number, alreadyRead = 0): void {
  let size = alreadyRead;
  const cap = limit * 4;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > cap) req.socket.destroy();
  });
  req.resume();
}

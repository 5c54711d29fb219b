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
 * Reads a chunked body, counting bytes, so that one over the limit never reaches a service.
 * Resolves with the body, or with undefined as soon as it passes the limit.
 */
export function readChunkedBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
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

import { randomBytes } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/**
 * UUIDv7 (RFC 9562): 48 bits of unix milliseconds, then random bits, so ids sort by creation time
 * and index well. Within one millisecond a 12-bit counter keeps ids of this process increasing.
 */
export function uuidv7(now = Date.now()): string {
  if (now <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
    now = lastMs;
  } else {
    lastMs = now;
    sequence = randomBytes(2).readUInt16BE() & 0x7ff;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

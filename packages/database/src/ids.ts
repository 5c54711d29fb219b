import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/**
 * Random bytes drawn from the CSPRNG 4 KiB at a time (as node's randomUUID caches its own): one
 * system call per 256 ids instead of one or two per id, which showed in publication's profile.
 */
const POOL = Buffer.alloc(4096);
let offset = POOL.length;
const SCRATCH = Buffer.alloc(16);
function random(n: number): Buffer {
  if (offset + n > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  offset += n;
  return POOL.subarray(offset - n, offset);
}

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
    sequence = random(2).readUInt16BE() & 0x7ff;
  }
  const bytes = SCRATCH;
  random(16).copy(bytes); // the pool's bytes are only read
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

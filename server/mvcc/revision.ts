// A revision names one change: main is the store revision of the transaction, sub the change's position
// inside it. In the "key" bucket a revision is the key: 8-byte big-endian main, '_', 8-byte big-endian
// sub, and a trailing 't' marks a tombstone (a delete), as in the reference.

/** A store revision: main (transaction) and sub (change within it). */
export interface Revision {
  main: number;
  sub: number;
}

/** Length of an encoded revision without the tombstone mark. */
export const REV_BYTES_LEN = 17;
const TOMBSTONE_MARK = 0x74; // 't'

/** -1 if a < b, 0 if equal, 1 if a > b. */
export function compareRev(a: Revision, b: Revision): number {
  if (a.main !== b.main) return a.main < b.main ? -1 : 1;
  if (a.sub !== b.sub) return a.sub < b.sub ? -1 : 1;
  return 0;
}

function writeU64(b: Uint8Array, off: number, n: number): void {
  const hi = Math.floor(n / 0x100000000);
  const lo = n >>> 0;
  b[off] = hi >>> 24;
  b[off + 1] = (hi >>> 16) & 0xff;
  b[off + 2] = (hi >>> 8) & 0xff;
  b[off + 3] = hi & 0xff;
  b[off + 4] = lo >>> 24;
  b[off + 5] = (lo >>> 16) & 0xff;
  b[off + 6] = (lo >>> 8) & 0xff;
  b[off + 7] = lo & 0xff;
}

function readU64(b: Uint8Array, off: number): number {
  const hi = ((b[off] << 24) | (b[off + 1] << 16) | (b[off + 2] << 8) | b[off + 3]) >>> 0;
  const lo = ((b[off + 4] << 24) | (b[off + 5] << 16) | (b[off + 6] << 8) | b[off + 7]) >>> 0;
  return hi * 0x100000000 + lo;
}

/** Encodes a revision as a key of the "key" bucket (tombstone: with the trailing mark). */
export function revToBytes(rev: Revision, tombstone = false): Uint8Array {
  const b = new Uint8Array(tombstone ? REV_BYTES_LEN + 1 : REV_BYTES_LEN);
  writeU64(b, 0, rev.main);
  b[8] = 0x5f; // '_'
  writeU64(b, 9, rev.sub);
  if (tombstone) b[REV_BYTES_LEN] = TOMBSTONE_MARK;
  return b;
}

/** Decodes a "key" bucket key. */
export function bytesToRev(b: Uint8Array): Revision {
  return { main: readU64(b, 0), sub: readU64(b, 9) };
}

/** Whether a "key" bucket key marks a delete. */
export function isTombstone(b: Uint8Array): boolean {
  return b.byteLength === REV_BYTES_LEN + 1 && b[REV_BYTES_LEN] === TOMBSTONE_MARK;
}

/** The first possible key of main revision `main` (range bound). */
export function mainRevBound(main: number): Uint8Array {
  return revToBytes({ main, sub: 0 });
}

/** A compact map key for a revision (used for "keep" sets). */
export function revKey(rev: Revision): string {
  return `${rev.main}_${rev.sub}`;
}

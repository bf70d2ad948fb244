// Checksums for on-disk records. Node 20 ships a native CRC-32 (IEEE) in zlib; it is fast and needs no
// dependency, and the second argument lets a caller continue a running checksum over several buffers.
// CRC-32C (Castagnoli) is the reference's: its WAL chains it through records, `snapshot status` hashes with it.
import { crc32 as zlibCrc32 } from 'node:zlib';

/** CRC-32 (IEEE) of `data`, continuing from `previous` (0 starts a new checksum). */
export function crc32(data: Uint8Array, previous = 0): number {
  return zlibCrc32(data, previous) >>> 0;
}

// Eight tables (slice-by-8): eight bytes a step, several times faster than a byte a step; HashKV and every
// compaction run it over the whole store.
const CRC32C_TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  for (let i = 0; i < 256; i++) {
    for (let k = 1; k < 8; k++) t[k * 256 + i] = (t[(k - 1) * 256 + i] >>> 8) ^ t[t[(k - 1) * 256 + i] & 0xff];
  }
  return t;
})();

/** CRC-32C (Castagnoli), continuing from `crc`. */
export function crc32c(b: Uint8Array, crc = 0): number {
  const t = CRC32C_TABLES;
  let c = ~crc >>> 0;
  let i = 0;
  for (const end = b.length - 7; i < end; i += 8) {
    const lo = (c ^ (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24))) >>> 0;
    c = t[7 * 256 + (lo & 0xff)] ^ t[6 * 256 + ((lo >>> 8) & 0xff)] ^ t[5 * 256 + ((lo >>> 16) & 0xff)] ^ t[4 * 256 + (lo >>> 24)] ^
      t[3 * 256 + b[i + 4]] ^ t[2 * 256 + b[i + 5]] ^ t[256 + b[i + 6]] ^ t[b[i + 7]];
  }
  for (; i < b.length; i++) c = t[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

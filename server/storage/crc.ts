// Checksums for on-disk records. Node 20 ships a native CRC-32 (IEEE) in zlib; it is fast and needs no
// dependency, and the second argument lets a caller continue a running checksum over several buffers.
// CRC-32C (Castagnoli) is the reference's: its WAL chains it through records, `snapshot status` hashes with it.
import { crc32 as zlibCrc32 } from 'node:zlib';

/** CRC-32 (IEEE) of `data`, continuing from `previous` (0 starts a new checksum). */
export function crc32(data: Uint8Array, previous = 0): number {
  return zlibCrc32(data, previous) >>> 0;
}

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), continuing from `crc`. */
export function crc32c(b: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (let i = 0; i < b.length; i++) c = CRC32C_TABLE[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

// Checksums for on-disk records. Node 20 ships a native CRC-32 (IEEE) in zlib; it is fast and needs no
// dependency, and the second argument lets a caller continue a running checksum over several buffers.
import { crc32 as zlibCrc32 } from 'node:zlib';

/** CRC-32 (IEEE) of `data`, continuing from `previous` (0 starts a new checksum). */
export function crc32(data: Uint8Array, previous = 0): number {
  return zlibCrc32(data, previous) >>> 0;
}

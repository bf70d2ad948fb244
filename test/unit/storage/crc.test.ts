// CRC-32C as the reference computes it: the standard check value, and eight bytes a step giving what a byte a step
// gives, for any length, alignment and running checksum.
import { expect } from 'chai';
import { crc32c } from '../../../server/storage/crc.js';

/** CRC-32C a byte at a time (the definition the tables come from). */
function bytewise(b: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (const x of b) {
    c ^= x;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return ~c >>> 0;
}

describe('storage/crc: CRC-32C', () => {
  it('gives the standard check value of "123456789" (0xe3069283)', () => {
    expect(crc32c(Buffer.from('123456789'))).to.equal(0xe3069283);
  });

  it('equals the byte-at-a-time definition for every length 0-40 at every alignment, continuing a running checksum', () => {
    const b = Buffer.alloc(64);
    for (let i = 0; i < b.length; i++) b[i] = (i * 131 + 7) & 0xff;
    for (let off = 0; off < 8; off++) {
      for (let n = 0; n <= 40; n++) {
        const s = b.subarray(off, off + n);
        expect(crc32c(s, 0x1234567), `offset ${off}, length ${n}`).to.equal(bytewise(s, 0x1234567));
      }
    }
  });
});

// A minimal protobuf reader for the reference's on-disk records (bbolt values, WAL records, snapshot files):
// field number -> values, without a schema, so the formats' facts stay next to the code that reads them.

/** A decoded field: varints and fixed64/32 as given (varint as bigint, fixed as Buffer), length-delimited as Buffer. */
export type PbField = bigint | Buffer;
type Field = PbField;

/** Decodes a message into field number -> values (varints as bigint, length-delimited as Buffer). */
export function pbRead(b: Uint8Array): Map<number, Field[]> {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const out = new Map<number, Field[]>();
  let i = 0;
  const readVarint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('protobuf: truncated varint');
      const c = buf[i++];
      v |= BigInt(c & 0x7f) << shift;
      if (!(c & 0x80)) return v;
      shift += 7n;
      if (shift > 70n) throw new Error('protobuf: varint too long');
    }
  };
  while (i < buf.length) {
    const tag = Number(readVarint());
    const field = tag >>> 3;
    let v: Field;
    switch (tag & 7) {
      case 0: v = readVarint(); break;
      case 1: v = buf.subarray(i, i + 8); i += 8; break;
      case 2: {
        const len = Number(readVarint());
        if (i + len > buf.length) throw new Error('protobuf: truncated field');
        v = buf.subarray(i, i + len);
        i += len;
        break;
      }
      case 5: v = buf.subarray(i, i + 4); i += 4; break;
      default: throw new Error(`protobuf: unsupported wire type ${tag & 7}`);
    }
    out.set(field, [...(out.get(field) ?? []), v]);
  }
  return out;
}

export const pbNum = (m: Map<number, Field[]>, f: number): bigint => {
  const v = m.get(f)?.at(-1);
  return typeof v === 'bigint' ? v : 0n;
};
export const pbBytes = (m: Map<number, Field[]>, f: number): Buffer => {
  const v = m.get(f)?.at(-1);
  return Buffer.isBuffer(v) ? v : Buffer.alloc(0);
};
export const pbAll = (m: Map<number, Field[]>, f: number): Buffer[] => (m.get(f) ?? []).filter((v): v is Buffer => Buffer.isBuffer(v));
export const pbInt64 = (v: bigint) => Number(BigInt.asIntN(64, v));

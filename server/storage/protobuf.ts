// A minimal protobuf reader and writer for the reference's on-disk records (bbolt values, WAL records, snapshot
// files): field number -> values, without a schema, so the formats' facts stay next to the code that uses them.

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

/** Encodes fields in the given order, proto3 style: zero numbers and empty bytes left out unless `keep`. */
export class PbWriter {
  private readonly parts: Uint8Array[] = [];
  /** Tags, lengths and numbers not yet in `parts`: bytes fields go in as they are, not copied byte by byte. */
  private head: number[] = [];

  int(field: number, v: bigint | number | boolean): this {
    const n = typeof v === 'boolean' ? (v ? 1 : 0) : v;
    if (n === 0 || n === 0n) return this;
    this.varint(field << 3);
    this.varint(n);
    return this;
  }

  bytes(field: number, v: Uint8Array | string, keep = false): this {
    const b = typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
    if (b.byteLength === 0 && !keep) return this;
    this.varint((field << 3) | 2);
    this.varint(b.byteLength);
    this.parts.push(Uint8Array.from(this.head), b);
    this.head = [];
    return this;
  }

  done(): Buffer {
    return Buffer.concat([...this.parts, Uint8Array.from(this.head)]);
  }

  private varint(n: number | bigint): void {
    if (typeof n === 'number' && n >= 0) {
      // tags, lengths, revisions: non-negative and below 2^53, so plain numbers do (no BigInt per field)
      for (; n >= 0x80; n = Math.floor(n / 0x80)) this.head.push((n % 0x80) | 0x80);
      this.head.push(n);
      return;
    }
    let v = BigInt.asUintN(64, BigInt(n));
    for (; v >= 0x80n; v >>= 7n) this.head.push(Number(v & 0x7fn) | 0x80);
    this.head.push(Number(v));
  }
}

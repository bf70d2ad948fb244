// The key-value record as clients see it and as the "key" bucket stores it (our own compact encoding:
// a fixed header, the key, then the value).

/** A key's state at one revision (the reference's mvccpb.KeyValue). */
export interface KeyValue {
  key: Uint8Array;
  createRevision: number;
  modRevision: number;
  version: number;
  value: Uint8Array;
  /** 0n: no lease. */
  lease: bigint;
}

const HEADER = 1 + 8 * 4 + 4;
const FORMAT = 1;

/** Encodes a KeyValue for the "key" bucket. */
export function encodeKv(kv: KeyValue): Uint8Array {
  const out = Buffer.allocUnsafe(HEADER + kv.key.byteLength + kv.value.byteLength);
  out[0] = FORMAT;
  out.writeBigUInt64BE(BigInt(kv.createRevision), 1);
  out.writeBigUInt64BE(BigInt(kv.modRevision), 9);
  out.writeBigUInt64BE(BigInt(kv.version), 17);
  out.writeBigInt64BE(BigInt.asIntN(64, kv.lease), 25);
  out.writeUInt32BE(kv.key.byteLength, 33);
  out.set(kv.key, HEADER);
  out.set(kv.value, HEADER + kv.key.byteLength);
  return out;
}

/** Decodes a "key" bucket value. */
export function decodeKv(b: Uint8Array): KeyValue {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (buf[0] !== FORMAT) throw new Error(`mvcc: unknown key-value record format ${buf[0]}`);
  const keyLen = buf.readUInt32BE(33);
  return {
    createRevision: Number(buf.readBigUInt64BE(1)),
    modRevision: Number(buf.readBigUInt64BE(9)),
    version: Number(buf.readBigUInt64BE(17)),
    lease: buf.readBigInt64BE(25),
    key: Uint8Array.prototype.slice.call(buf, HEADER, HEADER + keyLen),
    value: Uint8Array.prototype.slice.call(buf, HEADER + keyLen),
  };
}

/** Bytes as a latin-1 string: byte-order comparable with `<`, usable as a Map key. */
export function keyStr(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
}

/** The inverse of keyStr. */
export function strKey(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, 'latin1'));
}

/**
 * Normalizes a client range end to the index form: null = exactly `key` (empty or missing end),
 * undefined = every key >= key (end "\0"), else the exclusive end as a string.
 */
export function normalizeEnd(end: Uint8Array | undefined | null): string | null | undefined {
  if (!end || end.byteLength === 0) return null;
  if (end.byteLength === 1 && end[0] === 0) return undefined;
  return keyStr(end);
}

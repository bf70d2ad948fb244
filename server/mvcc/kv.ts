// The key-value record as clients see it and as the "key" bucket stores it (our own compact encoding:
// a fixed header, the key, then the value).
import { bytesToKey } from '../storage/backend-buffer.js';
import { PbWriter } from '../storage/protobuf.js';
import { crc32c } from '../storage/crc.js';

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
const TWO32 = 0x100000000;

function putU32(b: Uint8Array, off: number, n: number): void {
  b[off] = n >>> 24;
  b[off + 1] = (n >>> 16) & 0xff;
  b[off + 2] = (n >>> 8) & 0xff;
  b[off + 3] = n & 0xff;
}

function getU32(b: Uint8Array, off: number): number {
  return ((b[off] << 24) | (b[off + 1] << 16) | (b[off + 2] << 8) | b[off + 3]) >>> 0;
}

function putNum(b: Uint8Array, off: number, n: number): void {
  putU32(b, off, Math.floor(n / TWO32));
  putU32(b, off + 4, n >>> 0);
}

function getNum(b: Uint8Array, off: number): number {
  return getU32(b, off) * TWO32 + getU32(b, off + 4);
}

/** Encodes a KeyValue for the "key" bucket. */
export function encodeKv(kv: KeyValue): Uint8Array {
  const out = new Uint8Array(HEADER + kv.key.byteLength + kv.value.byteLength);
  out[0] = FORMAT;
  putNum(out, 1, kv.createRevision);
  putNum(out, 9, kv.modRevision);
  putNum(out, 17, kv.version);
  const lease = BigInt.asUintN(64, kv.lease);
  putU32(out, 25, Number(lease >> 32n));
  putU32(out, 29, Number(lease & 0xffffffffn));
  putU32(out, 33, kv.key.byteLength);
  out.set(kv.key, HEADER);
  out.set(kv.value, HEADER + kv.key.byteLength);
  return out;
}

/**
 * The "key" bucket record of a new revision of `key`, and its KeyValue whose key and value are views of that record:
 * one allocation for the stored bytes and the copies the store keeps of the caller's key and value. The record is
 * handed over to the backend as it is (nothing changes it afterwards), and the views live on in watch events.
 */
export function newKvRecord(key: Uint8Array, value: Uint8Array, createRevision: number, modRevision: number, version: number, lease: bigint): { record: Uint8Array; kv: KeyValue } {
  const record = encodeKv({ key, value, createRevision, modRevision, version, lease });
  const kv: KeyValue = {
    key: new Uint8Array(record.buffer, record.byteOffset + HEADER, key.byteLength),
    createRevision,
    modRevision,
    version,
    value: new Uint8Array(record.buffer, record.byteOffset + HEADER + key.byteLength, value.byteLength),
    lease,
  };
  return { record, kv };
}

/**
 * Decodes a "key" bucket value. By default key and value are copies. With `copy` false they are views of b, for a
 * caller that owns b and never changes it (a range answered at once): two allocations less per key.
 */
export function decodeKv(b: Uint8Array, copy = true): KeyValue {
  if (b[0] !== FORMAT) throw new Error(`mvcc: unknown key-value record format ${b[0]}`);
  const keyLen = getU32(b, 33);
  const hi = getU32(b, 25);
  const lo = getU32(b, 29);
  return {
    createRevision: getNum(b, 1),
    modRevision: getNum(b, 9),
    version: getNum(b, 17),
    lease: hi === 0 && lo === 0 ? 0n : BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)),
    // Plain Uint8Array views (copied when asked) of whatever b is (a Buffer from lmdb or a buffered Uint8Array).
    key: copyIf(new Uint8Array(b.buffer, b.byteOffset + HEADER, keyLen), copy),
    value: copyIf(new Uint8Array(b.buffer, b.byteOffset + HEADER + keyLen, b.byteLength - HEADER - keyLen), copy),
  };
}

function copyIf(view: Uint8Array, copy: boolean): Uint8Array {
  return copy ? view.slice() : view;
}

/** Bytes as a latin-1 string: byte-order comparable with `<`, usable as a Map key. */
export function keyStr(b: Uint8Array): string {
  return bytesToKey(b);
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

/**
 * A "key" bucket entry's value as the reference stores it: mvccpb.KeyValue in protobuf (zero fields left out), or
 * for a tombstone (`tombstone`) the key alone. Snapshots are written in it.
 */
export function referenceKvBytes(value: Uint8Array, tombstone: boolean): Uint8Array {
  const kv = decodeKv(value, false);
  const w = new PbWriter().bytes(1, kv.key);
  if (!tombstone) w.int(2, kv.createRevision).int(3, kv.modRevision).int(4, kv.version).bytes(5, kv.value).int(6, kv.lease);
  return w.done();
}

// the field headers and numbers of one entry, written between the key and value views crcReferenceKv hashes
const headerBytes = new Uint8Array(64);

/**
 * crc32c continued from `crc` over referenceKvBytes(value, tombstone), without building those bytes: HashKV and
 * compaction hash every entry, so the key and the value are hashed where they are and only the headers are written.
 */
export function crcReferenceKv(crc: number, value: Uint8Array, tombstone: boolean): number {
  const kv = decodeKv(value, false);
  let n = 0;
  const varint = (x: number | bigint): void => {
    if (typeof x === 'number') {
      for (; x >= 0x80; x = Math.floor(x / 0x80)) headerBytes[n++] = (x % 0x80) | 0x80;
      headerBytes[n++] = x;
      return;
    }
    let v = BigInt.asUintN(64, x);
    for (; v >= 0x80n; v >>= 7n) headerBytes[n++] = Number(v & 0x7fn) | 0x80;
    headerBytes[n++] = Number(v);
  };
  const flush = (): void => {
    crc = crc32c(headerBytes.subarray(0, n), crc);
    n = 0;
  };
  const bytes = (field: number, b: Uint8Array): void => {
    if (b.byteLength === 0) return;
    varint((field << 3) | 2);
    varint(b.byteLength);
    flush();
    crc = crc32c(b, crc);
  };
  const int = (field: number, x: number | bigint): void => {
    if (x === 0 || x === 0n) return;
    varint(field << 3);
    varint(x);
  };
  bytes(1, kv.key);
  if (!tombstone) {
    int(2, kv.createRevision);
    int(3, kv.modRevision);
    int(4, kv.version);
    bytes(5, kv.value);
    int(6, kv.lease);
    flush();
  }
  return crc;
}

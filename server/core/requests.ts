// The requests that go through the consensus log (the counterpart of the reference's InternalRaftRequest) and
// their encoding. Every write of the server is one of these, proposed by a member and applied by all.
import type { AuthOp } from '../auth/store.js';
import { int64ToNumber, type Incoming } from '../wire/index.js';

export type SortOrder = 'NONE' | 'ASCEND' | 'DESCEND';
export type SortTarget = 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE';

export interface RangeRequest {
  key: Uint8Array;
  rangeEnd: Uint8Array;
  limit: number;
  revision: number;
  sortOrder: SortOrder;
  sortTarget: SortTarget;
  serializable: boolean;
  keysOnly: boolean;
  countOnly: boolean;
  minModRevision: number;
  maxModRevision: number;
  minCreateRevision: number;
  maxCreateRevision: number;
}

export interface PutRequest {
  key: Uint8Array;
  value: Uint8Array;
  lease: bigint;
  prevKv: boolean;
  ignoreValue: boolean;
  ignoreLease: boolean;
}

export interface DeleteRangeRequest {
  key: Uint8Array;
  rangeEnd: Uint8Array;
  prevKv: boolean;
}

export type CompareResult = 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
export type CompareTarget = 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';

export interface Compare {
  result: CompareResult;
  target: CompareTarget;
  key: Uint8Array;
  rangeEnd: Uint8Array;
  version: number;
  createRevision: number;
  modRevision: number;
  value: Uint8Array;
  lease: bigint;
}

export type RequestOp =
  | { range: RangeRequest }
  | { put: PutRequest }
  | { deleteRange: DeleteRangeRequest }
  | { txn: TxnRequest };

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

export interface CompactionRequest {
  revision: number;
  physical: boolean;
}

export type AlarmType = 'NONE' | 'NOSPACE' | 'CORRUPT';
export interface AlarmRequest {
  action: 'GET' | 'ACTIVATE' | 'DEACTIVATE';
  memberId: bigint;
  alarm: AlarmType;
}

/**
 * Who proposed a request on a client's behalf, as the reference's RequestHeader in InternalRaftRequest: the user
 * and the auth revision its token speaks for (both empty, "" and 0, when authentication was off at the gate). The
 * permissions are checked again when the entry is applied (AuthStore.checkHeader*): a revision older than the
 * store's fails with "revision of auth store is old". Requests the server makes itself (expired leases, cluster
 * version, member attributes) and entries written before svc carried it have none and are not checked again.
 */
export interface RequestHeader {
  username: string;
  authRevision: number;
}

/** One entry's worth of work. `id` matches the proposer's waiter to the apply result. */
export type InternalRequest = { id: bigint; header?: RequestHeader } & (
  | { kind: 'put'; put: PutRequest }
  | { kind: 'deleteRange'; deleteRange: DeleteRangeRequest }
  | { kind: 'txn'; txn: TxnRequest }
  | { kind: 'compaction'; compaction: CompactionRequest }
  | { kind: 'leaseGrant'; leaseGrant: { id: bigint; ttl: number } }
  | { kind: 'leaseRevoke'; leaseRevoke: { id: bigint } }
  | { kind: 'alarm'; alarm: AlarmRequest }
  | { kind: 'clusterVersionSet'; clusterVersionSet: { version: string } }
  | { kind: 'downgradeInfoSet'; downgradeInfoSet: { enabled: boolean; ver: string } }
  | { kind: 'memberAttrSet'; memberAttrSet: { memberId: bigint; name: string; clientURLs: string[] } }
  | { kind: 'v2'; v2: { method: 'PUT' | 'DELETE'; path: string; value?: string; dir?: boolean; recursive?: boolean; prevExist?: boolean } }
  | { kind: 'auth'; auth: AuthOp }
);

export type RequestKind = InternalRequest['kind'];

// The requests from their wire messages (the API's handlers, and the conversion of a reference data dir's log).
const EMPTY = Buffer.alloc(0);
const big = (v: string | undefined): bigint => (v === undefined || v === '' ? 0n : BigInt(v));
const bytes = (v: Uint8Array | undefined): Buffer => (v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : EMPTY);

export function rangeFromPb(r: Incoming<'etcdserverpb.RangeRequest'>): RangeRequest {
  return {
    key: bytes(r.key),
    rangeEnd: bytes(r.range_end),
    limit: int64ToNumber(r.limit),
    revision: int64ToNumber(r.revision),
    sortOrder: r.sort_order || 'NONE',
    sortTarget: r.sort_target || 'KEY',
    serializable: !!r.serializable,
    keysOnly: !!r.keys_only,
    countOnly: !!r.count_only,
    minModRevision: int64ToNumber(r.min_mod_revision),
    maxModRevision: int64ToNumber(r.max_mod_revision),
    minCreateRevision: int64ToNumber(r.min_create_revision),
    maxCreateRevision: int64ToNumber(r.max_create_revision),
  };
}

export function putFromPb(r: Incoming<'etcdserverpb.PutRequest'>): PutRequest {
  return {
    key: bytes(r.key),
    value: bytes(r.value),
    lease: big(r.lease),
    prevKv: !!r.prev_kv,
    ignoreValue: !!r.ignore_value,
    ignoreLease: !!r.ignore_lease,
  };
}

export function deleteFromPb(r: Incoming<'etcdserverpb.DeleteRangeRequest'>): DeleteRangeRequest {
  return { key: bytes(r.key), rangeEnd: bytes(r.range_end), prevKv: !!r.prev_kv };
}

function compareFromPb(c: Incoming<'etcdserverpb.Compare'>): Compare {
  return {
    result: c.result || 'EQUAL',
    target: c.target || 'VERSION',
    key: bytes(c.key),
    rangeEnd: bytes(c.range_end),
    version: int64ToNumber(c.version),
    createRevision: int64ToNumber(c.create_revision),
    modRevision: int64ToNumber(c.mod_revision),
    value: bytes(c.value),
    lease: big(c.lease),
  };
}

function opFromPb(op: Incoming<'etcdserverpb.RequestOp'>): RequestOp {
  if (op.request_range) return { range: rangeFromPb(op.request_range) };
  if (op.request_put) return { put: putFromPb(op.request_put) };
  if (op.request_delete_range) return { deleteRange: deleteFromPb(op.request_delete_range) };
  if (op.request_txn) return { txn: txnFromPb(op.request_txn) };
  // An empty RequestOp is a no-op range of nothing in the reference; keep it as an empty range.
  return { range: rangeFromPb({}) };
}

export function txnFromPb(r: Incoming<'etcdserverpb.TxnRequest'>): TxnRequest {
  return {
    compare: (r.compare ?? []).map(compareFromPb),
    success: (r.success ?? []).map(opFromPb),
    failure: (r.failure ?? []).map(opFromPb),
  };
}

// A small tagged JSON: bytes and 64-bit integers survive the round trip exactly.
function toTagged(v: unknown): unknown {
  if (v instanceof Uint8Array) return { $b: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
  if (typeof v === 'bigint') return { $n: v.toString(16) };
  if (Array.isArray(v)) return v.map(toTagged);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = toTagged(x);
    return out;
  }
  return v;
}

function reviver(_k: string, v: unknown): unknown {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (typeof o.$b === 'string') return Buffer.from(o.$b, 'base64');
    if (typeof o.$n === 'string') return BigInt('0x' + o.$n);
  }
  return v;
}

// The hot kinds (put, deleteRange) have a compact binary form: walking, stringifying and base64-ing every
// put cost more CPU than the rest of its path. A binary entry starts with BINARY_MARKER, which no JSON text
// starts with ('{' is 0x7b), so entries written in the tagged JSON form earlier still decode.
//   marker u8 | kind u8 | id u64 | flags u8 | lease i64 (put) | key u32+bytes | value or rangeEnd u32+bytes
//   [FLAG_HEADER: auth revision u64 | user name u32+bytes]
// The header comes last, so a decoder that does not know the flag reads the rest as before.
const BINARY_MARKER = 0x01;
const KIND_PUT = 1;
const KIND_DELETE_RANGE = 2;
const FLAG_PREV_KV = 1;
const FLAG_IGNORE_VALUE = 2;
const FLAG_IGNORE_LEASE = 4;
const FLAG_HEADER = 8;
const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

function encodeBinary(r: InternalRequest): Uint8Array | undefined {
  if (r.id < 0n || r.id > U64_MAX) return undefined;
  if (r.kind === 'put') {
    const p = r.put;
    if (p.lease < I64_MIN || p.lease > I64_MAX) return undefined;
    const user = headerUser(r);
    const buf = Buffer.allocUnsafe(27 + p.key.length + p.value.length + (user ? 12 + user.length : 0));
    buf[0] = BINARY_MARKER;
    buf[1] = KIND_PUT;
    buf.writeBigUInt64BE(r.id, 2);
    buf[10] = (p.prevKv ? FLAG_PREV_KV : 0) | (p.ignoreValue ? FLAG_IGNORE_VALUE : 0) | (p.ignoreLease ? FLAG_IGNORE_LEASE : 0) | (user ? FLAG_HEADER : 0);
    buf.writeBigInt64BE(p.lease, 11);
    const o = writeBytes(buf, writeBytes(buf, 19, p.key), p.value);
    if (user) writeHeader(buf, o, r.header!.authRevision, user);
    return buf;
  }
  if (r.kind === 'deleteRange') {
    const d = r.deleteRange;
    const user = headerUser(r);
    const buf = Buffer.allocUnsafe(19 + d.key.length + d.rangeEnd.length + (user ? 12 + user.length : 0));
    buf[0] = BINARY_MARKER;
    buf[1] = KIND_DELETE_RANGE;
    buf.writeBigUInt64BE(r.id, 2);
    buf[10] = (d.prevKv ? FLAG_PREV_KV : 0) | (user ? FLAG_HEADER : 0);
    const o = writeBytes(buf, writeBytes(buf, 11, d.key), d.rangeEnd);
    if (user) writeHeader(buf, o, r.header!.authRevision, user);
    return buf;
  }
  return undefined;
}

/** The header's user name as bytes, or undefined when the request has no header. */
function headerUser(r: InternalRequest): Buffer | undefined {
  return r.header ? Buffer.from(r.header.username, 'utf8') : undefined;
}

function writeHeader(buf: Buffer, at: number, authRevision: number, user: Buffer): void {
  buf.writeBigUInt64BE(BigInt(authRevision), at);
  writeBytes(buf, at + 8, user);
}

function readHeader(buf: Buffer, at: number, flags: number): RequestHeader | undefined {
  if ((flags & FLAG_HEADER) === 0) return undefined;
  const authRevision = Number(buf.readBigUInt64BE(at));
  const [user] = readBytes(buf, at + 8);
  return { username: user.toString('utf8'), authRevision };
}

function writeBytes(buf: Buffer, at: number, b: Uint8Array): number {
  buf.writeUInt32BE(b.length, at);
  buf.set(b, at + 4);
  return at + 4 + b.length;
}

/**
 * Bytes at `at`, a view of the entry's buffer (which nothing changes): a request lives for its apply only, and the
 * store keeps copies of the keys and values it holds (the mvcc put builds its own record).
 */
function readBytes(buf: Buffer, at: number): [Buffer, number] {
  const n = buf.readUInt32BE(at);
  const end = at + 4 + n;
  if (end > buf.length) throw new RangeError('binary request: field runs past the end');
  return [buf.subarray(at + 4, end), end];
}

function decodeBinary(buf: Buffer): InternalRequest {
  const id = buf.readBigUInt64BE(2);
  const flags = buf[10];
  switch (buf[1]) {
    case KIND_PUT: {
      const lease = buf.readBigInt64BE(11);
      const [key, o] = readBytes(buf, 19);
      const [value, end] = readBytes(buf, o);
      const put: PutRequest = { key, value, lease, prevKv: (flags & FLAG_PREV_KV) !== 0, ignoreValue: (flags & FLAG_IGNORE_VALUE) !== 0, ignoreLease: (flags & FLAG_IGNORE_LEASE) !== 0 };
      const header = readHeader(buf, end, flags);
      return header ? { id, header, kind: 'put', put } : { id, kind: 'put', put };
    }
    case KIND_DELETE_RANGE: {
      const [key, o] = readBytes(buf, 11);
      const [rangeEnd, end] = readBytes(buf, o);
      const deleteRange = { key, rangeEnd, prevKv: (flags & FLAG_PREV_KV) !== 0 };
      const header = readHeader(buf, end, flags);
      return header ? { id, header, kind: 'deleteRange', deleteRange } : { id, kind: 'deleteRange', deleteRange };
    }
    default:
      throw new RangeError(`binary request: unknown kind ${buf[1]}`);
  }
}

/** The log entry for a request: binary for the hot kinds, tagged JSON for the rest. */
export function encodeRequest(r: InternalRequest): Uint8Array {
  return encodeBinary(r) ?? Buffer.from(JSON.stringify(toTagged(r)));
}

/** Decodes either form (entries written before the binary form existed are JSON). */
export function decodeRequest(data: Uint8Array): InternalRequest {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buf.length > 0 && buf[0] === BINARY_MARKER) return decodeBinary(buf);
  return JSON.parse(buf.toString('utf8'), reviver) as InternalRequest;
}

/** The same tagged JSON for anything else that crosses the log or a snapshot (conf change contexts, state). */
export const encodeTagged = (v: unknown): Uint8Array => Buffer.from(JSON.stringify(toTagged(v)));
export const decodeTagged = <T>(data: Uint8Array): T =>
  JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'), reviver) as T;

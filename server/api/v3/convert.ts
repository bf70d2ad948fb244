// Conversions between the wire's message shapes (as server/wire/loader.ts decodes them: snake_case names, 64-bit
// integers as decimal strings, bytes as Buffers, enums as names) and the server's internal requests and results.
import type { Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from '../../core/requests.js';
import type { KeyValue } from '../../mvcc/kv.js';
import protobuf from 'protobufjs';
import type { Int64 } from '../../wire/index.js';
import type { Incoming, Outgoing } from './service-methods.js';

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

export function kvToPb(kv: KeyValue): Outgoing<'mvccpb.KeyValue'> {
  return {
    key: kv.key,
    create_revision: kv.createRevision,
    mod_revision: kv.modRevision,
    version: kv.version,
    value: kv.value,
    // most keys have no lease: a number 0 spares protobufjs parsing the string "0" into a Long for every key
    lease: kv.lease === 0n ? 0 : kv.lease.toString(),
  };
}

/** A 64-bit integer (decoded: a decimal string or a number; as svc's own handlers answer: also a Long) as a number; absent or empty: 0. */
export function int64ToNumber(v: Int64 | undefined): number {
  if (v === undefined) return 0;
  if (typeof v === 'object') return protobuf.util.LongBits.from(v).toNumber(v.unsigned);
  return Number(v);
}

/** Is the transaction free of writes (so it can be served as a read)? */
export function txnIsReadOnly(t: TxnRequest): boolean {
  return [...t.success, ...t.failure].every((op) => 'range' in op || ('txn' in op && txnIsReadOnly(op.txn)));
}

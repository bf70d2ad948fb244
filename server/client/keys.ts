// Building request messages from the client's options: key ranges (prefix, from-key), operations, compares.
import type { Bytes, Compare, DeleteOptions, GetOptions, Op, PutOptions, TxnSpec } from './types.js';

/** Bytes as a Buffer (strings are UTF-8). */
export function toBuf(b: Bytes): Buffer {
  return typeof b === 'string' ? Buffer.from(b, 'utf8') : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** The end of the range of every key starting with `key` ("\0" — every key — when no such end exists). */
export function prefixEnd(key: Bytes): Buffer {
  const end = Buffer.from(toBuf(key));
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** range_end for a key and the prefix/fromKey/rangeEnd options. */
export function rangeEndFor(key: Bytes, o: { prefix?: boolean; fromKey?: boolean; rangeEnd?: Bytes }): Buffer {
  if (o.rangeEnd !== undefined) return toBuf(o.rangeEnd);
  if (o.prefix) return toBuf(key).length === 0 ? Buffer.from([0]) : prefixEnd(key);
  if (o.fromKey) return Buffer.from([0]);
  return Buffer.alloc(0);
}

const str = (v: number | string | bigint | undefined): string => (v === undefined ? '0' : String(v));

export function rangeRequest(key: Bytes, o: GetOptions = {}): Record<string, unknown> {
  let k = toBuf(key);
  // A from-key or prefix read of "" means every key; the reference sends "\0" as the key then.
  if (k.length === 0 && (o.fromKey || o.prefix)) k = Buffer.from([0]);
  return {
    key: k,
    range_end: rangeEndFor(key, o),
    limit: str(o.limit),
    revision: str(o.revision),
    sort_order: o.sortOrder ?? 'NONE',
    sort_target: o.sortTarget ?? 'KEY',
    serializable: !!o.serializable,
    keys_only: !!o.keysOnly,
    count_only: !!o.countOnly,
    min_mod_revision: str(o.minModRevision),
    max_mod_revision: str(o.maxModRevision),
    min_create_revision: str(o.minCreateRevision),
    max_create_revision: str(o.maxCreateRevision),
  };
}

export function putRequest(key: Bytes, value: Bytes, o: PutOptions = {}): Record<string, unknown> {
  return {
    key: toBuf(key),
    value: toBuf(value),
    lease: str(o.lease),
    prev_kv: !!o.prevKv,
    ignore_value: !!o.ignoreValue,
    ignore_lease: !!o.ignoreLease,
  };
}

export function deleteRequest(key: Bytes, o: DeleteOptions = {}): Record<string, unknown> {
  let k = toBuf(key);
  if (k.length === 0 && (o.fromKey || o.prefix)) k = Buffer.from([0]);
  return { key: k, range_end: rangeEndFor(key, o), prev_kv: !!o.prevKv };
}

function compareMessage(c: Compare): Record<string, unknown> {
  const out: Record<string, unknown> = {
    result: c.result,
    target: c.target,
    key: toBuf(c.key),
    range_end: c.rangeEnd === undefined ? Buffer.alloc(0) : toBuf(c.rangeEnd),
  };
  const num = () => (typeof c.value === 'number' || typeof c.value === 'bigint' ? String(c.value) : String(c.value));
  switch (c.target) {
    case 'VERSION': out.version = num(); break;
    case 'CREATE': out.create_revision = num(); break;
    case 'MOD': out.mod_revision = num(); break;
    case 'LEASE': out.lease = num(); break;
    case 'VALUE': out.value = typeof c.value === 'string' || c.value instanceof Uint8Array ? toBuf(c.value) : Buffer.from(String(c.value)); break;
  }
  return out;
}

function opMessage(op: Op): Record<string, unknown> {
  if ('get' in op) return { request_range: rangeRequest(op.get.key, op.get.options) };
  if ('put' in op) return { request_put: putRequest(op.put.key, op.put.value, op.put.options) };
  if ('delete' in op) return { request_delete_range: deleteRequest(op.delete.key, op.delete.options) };
  return { request_txn: txnRequest(op.txn) };
}

export function txnRequest(t: TxnSpec): Record<string, unknown> {
  return {
    compare: (t.compare ?? []).map(compareMessage),
    success: (t.success ?? []).map(opMessage),
    failure: (t.failure ?? []).map(opMessage),
  };
}

/** True when a transaction only reads (so it may be retried on another endpoint). */
export function txnReadOnly(t: TxnSpec): boolean {
  const ro = (ops: Op[] | undefined) => (ops ?? []).every((op) => 'get' in op || ('txn' in op && txnReadOnly(op.txn)));
  return ro(t.success) && ro(t.failure);
}

// Txn compare semantics of the reference (applyCompare/compareKV): a compare over a range holds only if it
// holds for every key in it; with no key, VALUE compares fail and the others compare against an empty
// record (version, revisions and lease all 0).
import type { KeyValue } from './kv.js';
import type { ReadTxn } from './kvstore.js';

/** Compare targets, numbered as in the reference's etcdserverpb.Compare.CompareTarget. */
export enum CompareTarget {
  VERSION = 0,
  CREATE = 1,
  MOD = 2,
  VALUE = 3,
  LEASE = 4,
}

/** Compare results, numbered as in etcdserverpb.Compare.CompareResult. */
export enum CompareResult {
  EQUAL = 0,
  GREATER = 1,
  LESS = 2,
  NOT_EQUAL = 3,
}

/** One compare of a txn. Names or numbers are accepted for target and result (proto loaders give either). */
export interface Compare {
  target: CompareTarget | keyof typeof CompareTarget;
  result: CompareResult | keyof typeof CompareResult;
  key: Uint8Array;
  /** Empty/absent: the single key; "\0": every key >= key. */
  rangeEnd?: Uint8Array;
  version?: number;
  createRevision?: number;
  modRevision?: number;
  value?: Uint8Array;
  lease?: bigint;
}

function toTarget(t: Compare['target']): CompareTarget {
  return typeof t === 'string' ? CompareTarget[t] : t;
}

function toResult(r: Compare['result']): CompareResult {
  return typeof r === 'string' ? CompareResult[r] : r;
}

function cmpNum(a: number | bigint, b: number | bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

const EMPTY_KV: KeyValue = {
  key: new Uint8Array(0),
  value: new Uint8Array(0),
  createRevision: 0,
  modRevision: 0,
  version: 0,
  lease: 0n,
};

/** Whether compare c holds for one kv. */
export function compareKv(c: Compare, kv: KeyValue): boolean {
  let r: number;
  switch (toTarget(c.target)) {
    case CompareTarget.VALUE:
      r = cmpBytes(kv.value, c.value ?? new Uint8Array(0));
      break;
    case CompareTarget.CREATE:
      r = cmpNum(kv.createRevision, c.createRevision ?? 0);
      break;
    case CompareTarget.MOD:
      r = cmpNum(kv.modRevision, c.modRevision ?? 0);
      break;
    case CompareTarget.VERSION:
      r = cmpNum(kv.version, c.version ?? 0);
      break;
    case CompareTarget.LEASE:
      r = cmpNum(kv.lease, c.lease ?? 0n);
      break;
    default:
      return false;
  }
  switch (toResult(c.result)) {
    case CompareResult.EQUAL:
      return r === 0;
    case CompareResult.NOT_EQUAL:
      return r !== 0;
    case CompareResult.GREATER:
      return r > 0;
    case CompareResult.LESS:
      return r < 0;
    default:
      return true;
  }
}

/** Whether compare c holds given the kvs of its key or range (as read at the txn's revision). */
export function evaluateCompare(kvs: readonly KeyValue[], c: Compare): boolean {
  if (kvs.length === 0) {
    // A missing key has no value to compare; every other target compares as 0.
    if (toTarget(c.target) === CompareTarget.VALUE) return false;
    return compareKv(c, EMPTY_KV);
  }
  for (const kv of kvs) if (!compareKv(c, kv)) return false;
  return true;
}

/** Reads c's key or range through txn and evaluates c (a failed read makes the compare false). */
export function evaluateCompareOn(txn: ReadTxn, c: Compare): boolean {
  let kvs: KeyValue[];
  try {
    kvs = txn.range(c.key, c.rangeEnd, {}).kvs;
  } catch {
    return false;
  }
  return evaluateCompare(kvs, c);
}

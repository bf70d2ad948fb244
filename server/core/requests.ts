// The requests that go through the consensus log (the counterpart of the reference's InternalRaftRequest) and
// their encoding. Every write of the server is one of these, proposed by a member and applied by all.
import type { AuthOp } from '../auth/store.js';

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

/** One entry's worth of work. `id` matches the proposer's waiter to the apply result. */
export type InternalRequest = { id: bigint } & (
  | { kind: 'put'; put: PutRequest }
  | { kind: 'deleteRange'; deleteRange: DeleteRangeRequest }
  | { kind: 'txn'; txn: TxnRequest }
  | { kind: 'compaction'; compaction: CompactionRequest }
  | { kind: 'leaseGrant'; leaseGrant: { id: bigint; ttl: number } }
  | { kind: 'leaseRevoke'; leaseRevoke: { id: bigint } }
  | { kind: 'alarm'; alarm: AlarmRequest }
  | { kind: 'clusterVersionSet'; clusterVersionSet: { version: string } }
  | { kind: 'memberAttrSet'; memberAttrSet: { memberId: bigint; name: string; clientURLs: string[] } }
  | { kind: 'v2'; v2: { method: 'PUT' | 'DELETE'; path: string; value?: string; dir?: boolean; recursive?: boolean; prevExist?: boolean } }
  | { kind: 'auth'; auth: AuthOp }
);

export type RequestKind = InternalRequest['kind'];

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

export function encodeRequest(r: InternalRequest): Uint8Array {
  return Buffer.from(JSON.stringify(toTagged(r)));
}

export function decodeRequest(data: Uint8Array): InternalRequest {
  return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'), reviver) as InternalRequest;
}

/** The same tagged JSON for anything else that crosses the log or a snapshot (conf change contexts, state). */
export const encodeTagged = (v: unknown): Uint8Array => Buffer.from(JSON.stringify(toTagged(v)));
export const decodeTagged = <T>(data: Uint8Array): T =>
  JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'), reviver) as T;

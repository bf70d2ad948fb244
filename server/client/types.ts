// The message shapes the client returns: exactly what the wire carries, decoded like server/wire/loader.ts
// does (snake_case field names as in the .proto, 64-bit integers as decimal strings, bytes as Buffer, enums
// as names). Keeping the wire shape means `-w json` and other tools can print responses without a mapping.

import type { Messages } from '../wire/index.js';

/** Bytes given by a caller: a string is taken as UTF-8. */
export type Bytes = string | Uint8Array;

/** Every response's header. */
export type ResponseHeader = Messages['etcdserverpb.ResponseHeader'];

export type KeyValue = Messages['mvccpb.KeyValue'];

export interface RangeResponse {
  header: ResponseHeader;
  kvs: KeyValue[];
  more: boolean;
  count: string;
}

export interface PutResponse {
  header: ResponseHeader;
  prev_kv: KeyValue | null;
}

export interface DeleteRangeResponse {
  header: ResponseHeader;
  deleted: string;
  prev_kvs: KeyValue[];
}

export interface ResponseOp {
  response?: 'response_range' | 'response_put' | 'response_delete_range' | 'response_txn';
  response_range?: RangeResponse | null;
  response_put?: PutResponse | null;
  response_delete_range?: DeleteRangeResponse | null;
  response_txn?: TxnResponse | null;
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: ResponseOp[];
}

export interface Event {
  type: 'PUT' | 'DELETE';
  kv: KeyValue;
  prev_kv: KeyValue | null;
}

export interface WatchResponse {
  header: ResponseHeader;
  watch_id: string;
  created: boolean;
  canceled: boolean;
  compact_revision: string;
  cancel_reason: string;
  fragment: boolean;
  events: Event[];
}

export interface LeaseGrantResponse {
  header: ResponseHeader;
  ID: string;
  TTL: string;
  error: string;
}

export interface LeaseKeepAliveResponse {
  header: ResponseHeader;
  ID: string;
  TTL: string;
}

export interface LeaseTimeToLiveResponse {
  header: ResponseHeader;
  ID: string;
  TTL: string;
  grantedTTL: string;
  keys: Buffer[];
}

export interface LeaseLeasesResponse {
  header: ResponseHeader;
  leases: Array<{ ID: string }>;
}

export interface Member {
  ID: string;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

export interface MemberListResponse {
  header: ResponseHeader;
  members: Member[];
}

export interface MemberAddResponse {
  header: ResponseHeader;
  member: Member;
  members: Member[];
}

export interface MembersResponse {
  header: ResponseHeader;
  members: Member[];
}

export interface StatusResponse {
  header: ResponseHeader;
  version: string;
  dbSize: string;
  leader: string;
  raftIndex: string;
  raftTerm: string;
  raftAppliedIndex: string;
  errors: string[];
  dbSizeInUse: string;
  isLearner: boolean;
}

export interface AlarmMember {
  memberID: string;
  alarm: 'NONE' | 'NOSPACE' | 'CORRUPT';
}

export interface AlarmResponse {
  header: ResponseHeader;
  alarms: AlarmMember[];
}

export interface HashKVResponse {
  header: ResponseHeader;
  hash: number;
  compact_revision: string;
}

/** A response that carries nothing but the header (Compact, Defragment, MoveLeader, most Auth calls). */
export interface HeaderResponse {
  header: ResponseHeader;
}

export interface AuthStatusResponse {
  header: ResponseHeader;
  enabled: boolean;
  authRevision: string;
}

export interface Permission {
  permType: 'READ' | 'WRITE' | 'READWRITE';
  key: Buffer;
  range_end: Buffer;
}

export interface AuthRoleGetResponse {
  header: ResponseHeader;
  perm: Permission[];
}

export interface NamesResponse {
  header: ResponseHeader;
  /** Set by UserGet, RoleList. */
  roles: string[];
  /** Set by UserList. */
  users: string[];
}

export type SortOrder = 'NONE' | 'ASCEND' | 'DESCEND';
export type SortTarget = 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE';

/** Options of get(): which keys, at which revision, how. */
export interface GetOptions {
  /** Every key starting with `key`. */
  prefix?: boolean;
  /** Every key >= `key`. */
  fromKey?: boolean;
  /** An explicit exclusive end of the range (overrides prefix/fromKey). */
  rangeEnd?: Bytes;
  limit?: number;
  revision?: number | string;
  /** Member-local read instead of a linearizable one (the reference's consistency "s"). */
  serializable?: boolean;
  keysOnly?: boolean;
  countOnly?: boolean;
  sortOrder?: SortOrder;
  sortTarget?: SortTarget;
  minModRevision?: number | string;
  maxModRevision?: number | string;
  minCreateRevision?: number | string;
  maxCreateRevision?: number | string;
}

export interface PutOptions {
  /** Lease id (decimal string, bigint or number). */
  lease?: string | bigint | number;
  prevKv?: boolean;
  ignoreValue?: boolean;
  ignoreLease?: boolean;
}

export interface DeleteOptions {
  prefix?: boolean;
  fromKey?: boolean;
  rangeEnd?: Bytes;
  prevKv?: boolean;
}

export type CompareResult = 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
export type CompareTarget = 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';

/** One guard of a transaction: `target(key) result operand`. */
export interface Compare {
  key: Bytes;
  rangeEnd?: Bytes;
  target: CompareTarget;
  result: CompareResult;
  /** The operand: a revision/version/lease number for numeric targets, bytes for VALUE. */
  value: Bytes | number | bigint;
}

/** One operation of a transaction branch. */
export type Op =
  | { get: { key: Bytes; options?: GetOptions } }
  | { put: { key: Bytes; value: Bytes; options?: PutOptions } }
  | { delete: { key: Bytes; options?: DeleteOptions } }
  | { txn: TxnSpec };

export interface TxnSpec {
  compare?: Compare[];
  success?: Op[];
  failure?: Op[];
}

export interface WatchOptions {
  prefix?: boolean;
  fromKey?: boolean;
  rangeEnd?: Bytes;
  /** Start at this revision (events of history included); 0 or absent = from now. */
  startRevision?: number | string;
  progressNotify?: boolean;
  prevKv?: boolean;
  /** Drop these event types. */
  filters?: Array<'NOPUT' | 'NODELETE'>;
}

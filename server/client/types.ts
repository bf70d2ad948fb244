// The message shapes the client returns: exactly what the wire carries, decoded like server/wire/loader.ts
// does (snake_case field names as in the .proto, 64-bit integers as decimal strings, bytes as Buffer, enums
// as names), taken from the generated messages (server/wire/messages.ts), not copied. Keeping the wire shape means
// `-w json` and other tools can print responses without a mapping.

import type { MessageName, Messages } from '../wire/index.js';

/** Bytes given by a caller: a string is taken as UTF-8. */
export type Bytes = string | Uint8Array;

/** A message as the client receives it. */
type Message<N extends MessageName> = Messages[N];

/** `T` with some of its fields narrowed (each must be a field of T: a misspelled name does not compile). */
type Narrow<T, R extends { [K in keyof R]: K extends keyof T ? unknown : never }> = Omit<T, keyof R> & R;

/**
 * A response as a server sends it: the decoder gives an absent message as null, but every answer of svc and of the
 * reference carries its header, so the type says it is there.
 */
export type Answer<N extends MessageName> = Messages[N] extends { header: unknown } ? Narrow<Messages[N], { header: ResponseHeader }> : Messages[N];

/** Every response's header. */
export type ResponseHeader = Message<'etcdserverpb.ResponseHeader'>;

export type KeyValue = Message<'mvccpb.KeyValue'>;

export type RangeResponse = Answer<'etcdserverpb.RangeResponse'>;
export type PutResponse = Answer<'etcdserverpb.PutResponse'>;
export type DeleteRangeResponse = Answer<'etcdserverpb.DeleteRangeResponse'>;
/** One answer of a txn (a oneof): the nested answers carry their header too. */
export type ResponseOp = Narrow<Message<'etcdserverpb.ResponseOp'>, {
  response_range?: RangeResponse;
  response_put?: PutResponse;
  response_delete_range?: DeleteRangeResponse;
  response_txn?: TxnResponse;
}>;
export type TxnResponse = Narrow<Answer<'etcdserverpb.TxnResponse'>, { responses: ResponseOp[] }>;

/** A watch event: a server always sends the key's new state (kv); prev_kv only when asked for. */
export type Event = Narrow<Message<'mvccpb.Event'>, { kv: KeyValue }>;
export type WatchResponse = Narrow<Answer<'etcdserverpb.WatchResponse'>, { events: Event[] }>;

export type LeaseGrantResponse = Answer<'etcdserverpb.LeaseGrantResponse'>;
export type LeaseKeepAliveResponse = Answer<'etcdserverpb.LeaseKeepAliveResponse'>;
export type LeaseTimeToLiveResponse = Answer<'etcdserverpb.LeaseTimeToLiveResponse'>;
export type LeaseLeasesResponse = Answer<'etcdserverpb.LeaseLeasesResponse'>;

export type Member = Message<'etcdserverpb.Member'>;
export type MemberListResponse = Answer<'etcdserverpb.MemberListResponse'>;
/** MemberAdd's answer: a server always names the member it added. */
export type MemberAddResponse = Narrow<Answer<'etcdserverpb.MemberAddResponse'>, { member: Member }>;
/** The answer of MemberRemove, MemberUpdate and MemberPromote (the same fields). */
export type MembersResponse = Answer<'etcdserverpb.MemberRemoveResponse'>;

export type StatusResponse = Answer<'etcdserverpb.StatusResponse'>;
export type AlarmMember = Message<'etcdserverpb.AlarmMember'>;
export type AlarmResponse = Answer<'etcdserverpb.AlarmResponse'>;
export type HashKVResponse = Answer<'etcdserverpb.HashKVResponse'>;

/** A response that carries nothing but the header (Compact, Defragment, MoveLeader, most Auth calls). */
export interface HeaderResponse {
  header: ResponseHeader;
}

export type AuthStatusResponse = Answer<'etcdserverpb.AuthStatusResponse'>;
export type Permission = Message<'authpb.Permission'>;
export type AuthRoleGetResponse = Answer<'etcdserverpb.AuthRoleGetResponse'>;
export type AuthUserGetResponse = Answer<'etcdserverpb.AuthUserGetResponse'>;
export type AuthUserListResponse = Answer<'etcdserverpb.AuthUserListResponse'>;
export type AuthRoleListResponse = Answer<'etcdserverpb.AuthRoleListResponse'>;

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

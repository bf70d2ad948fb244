// The narrow interfaces the core offers the API layer. Each v3 service module depends only on the ones it needs
// (server/api/v3/*.ts), and tests can hand it in-memory fakes.
import type { Member } from '../cluster/membership.js';
import type { AlarmType, InternalRequest, RangeRequest, TxnRequest } from './requests.js';
import type { RangeResult, TxnResult } from './state-machine.js';
import type { AuthStore } from '../auth/store.js';
import type { Release } from '../releases.js';
import type { Membership } from '../cluster/membership.js';
import type { DowngradeInfo } from '../cluster/downgrade.js';
import type { Backend } from '../storage/backend.js';
import type { Logger } from '../log/logger.js';
import type { WatchableStore } from '../mvcc/watchable-store.js';
import type { CompactionObservers } from '../mvcc/kvstore.js';
import type { MemberOptions } from './options.js';
import type { V2Store } from './v2store.js';
import type { V3StateMachine } from './state-machine.js';

/** What every response header carries. */
export interface HeaderFacts {
  readonly clusterId: bigint;
  readonly memberId: bigint;
  /** The current raft term. */
  readonly term: number;
  /** The store's current revision. */
  revision(): number;
}

/** Whether this member is a learner (it serves only its status, serializable reads and snapshots). */
export interface LearnerState {
  isLearner(): boolean;
}

/** Proposals through the log, resolving with their apply result. */
export interface Proposals {
  propose<T>(req: InternalRequest, timeoutMs?: number): Promise<T>;
  nextRequestId(): bigint;
}

/** Resolves when a read issued now may be served locally and be linearizable. */
export interface ReadBarrier {
  linearizableReadNotify(): Promise<void>;
}

/** Local reads of the v3 store. */
export interface KvReads {
  range(r: RangeRequest): RangeResult;
  readOnlyTxn(t: TxnRequest): TxnResult;
}

/** The space quota: refuses writes while NOSPACE is raised, and raises it when a write would pass the quota. */
export interface QuotaGuard {
  /**
   * Whether a write of `extraBytes` more may be proposed: undefined (synchronously, the common case), or a promise
   * that rejects with NOSPACE (after raising the alarm when this write is what passes the quota).
   */
  checkQuota(extraBytes: number): Promise<void> | undefined;
}

export interface LeaseTtl {
  ttl: number;
  grantedTtl: number;
  keys: Uint8Array[];
}

/** Lease reads that only the leader can answer exactly (it alone tracks expiry). */
export interface LeaseReads {
  /** The lease's remaining time (asked of the leader when this member is not it); undefined: no such lease. */
  leaseTimeToLive(id: bigint, keys: boolean): Promise<LeaseTtl | undefined>;
  leaseIds(): bigint[];
}

/** Membership changes, with the checks the reference makes before proposing them (strict reconfig, promote). */
export interface MembershipChanges {
  members(): Member[];
  addMember(peerURLs: string[], isLearner: boolean): Promise<{ member: Member; members: Member[] }>;
  removeMember(id: bigint): Promise<Member[]>;
  updateMember(id: bigint, peerURLs: string[]): Promise<Member[]>;
  promoteMember(id: bigint): Promise<Member[]>;
}

export interface AlarmEntry {
  memberId: bigint;
  alarm: AlarmType;
}

export interface ServerStatus {
  memberId: bigint;
  clusterId: bigint;
  leader: bigint;
  isLeader: boolean;
  term: number;
  commitIndex: number;
  appliedIndex: number;
  isLearner: boolean;
  dbSize: number;
  dbSizeInUse: number;
  /** The db's storage version ("3.6.0"; undefined: unknown) and the backend quota in bytes. */
  storageVersion: string | undefined;
  quotaBytes: number;
  /** The downgrade in progress ({enabled: false, targetVersion: ''} when none). */
  downgrade: { enabled: boolean; targetVersion: string };
}

/** The Maintenance service's view of the member. */
export interface MaintenanceCore {
  readonly logger: Logger;
  readonly alarms: readonly AlarmEntry[];
  readonly lead: bigint;
  status(): ServerStatus;
  capable(minor: string): boolean;
  clusterVersion(): string | undefined;
  downgradeInfo(): DowngradeInfo;
  /** Enable a downgrade to the target ("3.5.0") or end the job (undefined), through the log. */
  setDowngrade(targetVersion: string | undefined): Promise<void>;
  moveLeader(to: bigint): Promise<void>;
}

/** Maintenance calls on the v3 store. */
export interface KvMaintenance {
  hash(): number;
  hashKV(rev: number): { hash: number; revision: number; compactRevision: number };
  defrag(): Promise<void>;
}

/** Latency observers the metrics layer installs (seconds; the store's compaction ones: ms). */
export interface Observers extends CompactionObservers {
  walFsync?: (s: number) => void;
  apply?: (s: number) => void;
  hash?: (s: number) => void;
  hashRev?: (s: number) => void;
}

/** The Auth service's view: the auth store as applied, and the next log index (token ids). */
export interface AuthCore {
  readonly auth: AuthStore;
  readonly appliedIndex: number;
  capable(minor: string): boolean;
}

/** The member's release and limits the handlers enforce. */
export interface ApiLimits {
  readonly release: Release;
  readonly maxTxnOps: number;
  readonly bcryptCost: number;
}

/** What the streaming calls (Watch, LeaseKeepAlive, Snapshot; over gRPC and the gateway) need of the member. */
export interface StreamCore extends LearnerState {
  readonly logger: Logger;
  readonly kv: { readonly watchable: WatchableStore; forceCommit(): void };
  readonly backend: Backend;
  readonly membership: Pick<Membership, 'list' | 'removed'>;
  readonly alarms: readonly AlarmEntry[];
  readonly opts: Pick<MemberOptions, 'release' | 'watchProgressNotifyMs'>;
  renewLease(id: bigint): Promise<number>;
}

/** What /health asks: alarms, a leader, and a linearizable read in time. */
export interface HealthCore {
  readonly alarms: readonly AlarmEntry[];
  readonly lead: bigint;
  linearizableReadNotify(timeoutMs?: number): Promise<void>;
}

/** What the member's HTTP endpoints (/version, /health, the gateway, /v2/keys) need of it. */
export interface HttpCore extends StreamCore, HealthCore, Proposals {
  readonly opts: Pick<MemberOptions, 'release' | 'watchProgressNotifyMs' | 'maxRequestBytes' | 'enableV2'>;
  readonly clusterId: bigint;
  readonly appliedIndex: number;
  readonly term: number;
  readonly v2: V2Store;
  clusterVersionFull(): string;
  /** What /version answers (with "storage" from 3.6 on). */
  versionInfo(): { etcdserver: string; etcdcluster: string; storage?: string };
}

/** Proposal and read-index counters of the member, for its metrics. */
export interface ServerStats {
  readonly proposalsApplied: number;
  readonly proposalsPending: number;
  readonly proposalsFailed: number;
  readonly leaderChanges: number;
  readonly readIndexesFailed: number;
}

/** What the member's metrics read (and the latency observers they install). */
export interface MetricsCore {
  readonly memberId: bigint;
  readonly lead: bigint;
  readonly opts: Pick<MemberOptions, 'release' | 'quotaBackendBytes' | 'featureGates'>;
  readonly stats: ServerStats;
  readonly observers: Observers;
  readonly membership: Pick<Membership, 'member' | 'version' | 'list' | 'removed'>;
  readonly backend: Pick<Backend, 'size' | 'sizeInUse' | 'onCommit'>;
  readonly kv: Pick<V3StateMachine, 'stats' | 'keyCount' | 'rev' | 'compactRev'>;
  readonly alarms: readonly AlarmEntry[];
  readonly v2: V2Store;
  isLeader(): boolean;
}

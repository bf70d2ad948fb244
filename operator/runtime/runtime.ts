// The one interface the orchestrator drives members through. A local runtime runs child processes; a
// Kubernetes runtime runs pods of a StatefulSet. The planner never sees which.
import type { BackupEntry, BackupKind, SnapshotRecord, SvcClusterSpec, VerifiedStatus } from '../api/types.js';
import type { ClusterRecords, RecordsDocument } from '../planner/records.js';
import type { AgentObservation, Capability, MemberLoss, VolumeObservation, Step, TargetRevision, UpgradeProgress } from '../planner/types.js';
import type { HealingRuntime } from './healing.js';
import type { ScalingRuntime } from './scaling.js';

/** A member as the runtime knows it (no network calls: those are the member client's job). */
export interface RuntimeMember {
  name: string;
  /** Client URL, e.g. http://127.0.0.1:2379. */
  clientURL: string;
  /** Release the runtime runs (or will next run) the member as. */
  configuredVersion: string;
  /** The process/pod exists and has not exited. */
  running: boolean;
  /** Why the member is not running when it should be (exit status and the last log line, crash loop...). */
  failure?: string;
  /** Hash of the configuration it runs with (TargetRevision.config of its start); undefined: unknown. */
  configRevision?: string;
  /** Hash of the certificates it runs with; undefined: unknown or no TLS. */
  tlsRevision?: string;
  /**
   * Evidence that the member's data is gone, so it cannot come back and is replaced: its data dir (claim) empty
   * after it had data, a start refused as "already bootstrapped", a corrupt database. Never set for a member that
   * is merely down.
   */
  lost?: MemberLoss;
  /** Its data is gone (local: data dir missing or empty) or there (false); undefined: the runtime cannot tell. */
  dataLost?: boolean;
  /** It runs with --force-new-cluster (started so by forceNewCluster, not restarted since). */
  forcedNewCluster?: boolean;
  /** The restart request (TargetRevision.restart token) its current process was started under. */
  restartToken?: string;
}

/** Raised by runtimes; `code` says what went wrong. */
export class RuntimeError extends Error {
  readonly code: 'NO_CLUSTER' | 'EXISTS' | 'START_FAILED' | 'STOP_FAILED' | 'STATE_IO' | 'NO_MEMBER' | 'UNSUPPORTED';
  constructor(code: RuntimeError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RuntimeError';
    this.code = code;
  }
}

/**
 * Thrown by a runtime call that began its work and must be looked at again later (a Job still running, a claim
 * still being deleted). The engine turns it into a wait and a requeue: no reconcile sleeps on a slow cluster.
 * The call must be idempotent: the next pass plans the same step (from the same observation) and calls it again.
 */
export class StepPending extends Error {
  constructor(readonly code: string, message: string, readonly retryMs = 1000) {
    super(message);
    this.name = 'StepPending';
  }
}

/** The planner's recovery steps that have a runtime side. */
export type RecoverSnapshotStep = Extract<Step, { kind: 'recoverSnapshot' }>;

/** The planner's backup step. */
export type BackupStep = Extract<Step, { kind: 'backup' }>;

/** The planner's restore drill step. */
export type VerifyStep = Extract<Step, { kind: 'verifyBackup' }>;

/**
 * The cluster's record document (planner/records.ts) as stored: local, one field of the state file; Kubernetes, one
 * annotation of the SvcCluster. The engine loads it once a pass and writes it at most twice: before its step acts
 * and after.
 */
export interface RecordStore {
  /** The records, the requests a person made, the version a save must match, the cluster's facts. */
  load(): Promise<RecordsDocument>;
  /**
   * Writes `records` if the stored document is still at `version` (else a RuntimeError STATE_IO naming the
   * conflict: another process wrote it); resolves with the new version.
   */
  save(records: ClusterRecords, version: string): Promise<string>;
}

/** Where members run. Every mutating call is recorded (runtime.records) before it is made. */
export interface Runtime {
  /** "local" or "kubernetes", for messages only. */
  readonly kind: string;
  /** The record document. */
  readonly records: RecordStore;
  /** What it can do beyond running members; each has its interface (CapabilityOf), which the class implements. */
  readonly capabilities: readonly Capability[];
  /** The members, in name order; empty when the cluster does not exist. */
  members(): Promise<RuntimeMember[]>;
  /** Creates every member of a new cluster running spec.version. */
  createCluster(spec: SvcClusterSpec): Promise<void>;
  /**
   * Stops a member gracefully (SIGTERM: a leader hands leadership over first) and starts it on `version` with the
   * configuration (and certificates) of now. The start may be observed later (a pod being replaced).
   */
  restartMember(name: string, version: string): Promise<void>;
  /** Where the pre-upgrade snapshot of from -> to goes. */
  snapshotLocation(from: string, to: string, member: string): string;
  /** Removes snapshots beyond the newest `keep`. */
  pruneSnapshots(keep: number): Promise<string[]>;
  /** Estimated v2 data size (from the newest snapshot file of a member), when the runtime can tell. */
  v2DataBytes(member: string): Promise<number | undefined>;

  // Optional parts of running members; the engine uses them when a runtime has them.
  /** What members should run with now; with it, members whose revisions differ are rolled (one at a time). */
  targetRevision?(): Promise<TargetRevision | undefined>;
  /** Brings the runtime's own objects in line with the spec before each observation (Kubernetes: the owned objects). */
  prepare?(): Promise<void>;
  /**
   * Takes the pre-upgrade snapshot itself (Kubernetes with spec.backup.pvc: a Job); without it the engine
   * streams the leader's snapshot to snapshotLocation(). May throw StepPending while it is under way.
   */
  takeSnapshot?(step: Extract<Step, { kind: 'snapshot' }>, progress: UpgradeProgress): Promise<SnapshotRecord>;
  /**
   * Copies a backup or pre-upgrade snapshot the engine just took (a file at `taken.location`) to every object-store
   * destination of the spec, each with its manifest (`kv`: the leader's HashKV at the snapshot's revision), then
   * applies retention there. Throws (a DestinationError naming the destination and the cause) when one fails: the
   * step fails and is tried again, and a failing pre-upgrade snapshot keeps the upgrade from starting.
   */
  shipBackup?(taken: SnapshotRecord, kind: BackupKind, kv?: { hash: number; compactRevision: number }): Promise<void>;
  /**
   * Takes a member out of (`serving` false) or back into the client Service's endpoints around its
   * defragmentation (Kubernetes: a pod label the Service selects on); a runtime without a Service has none.
   */
  setServing?(member: string, serving: boolean): Promise<void>;
}

/** A snapshot the runtime leaves to the engine: it streams the leader's snapshot to this file. */
export interface StreamTo {
  streamTo: string;
}

/** Scheduled and on-demand backups (the `backup` step). */
export interface BackupsCapability {
  /** Takes the backup (Kubernetes: a Job, StepPending while it runs), or names the file the engine streams it to. */
  takeBackup(step: BackupStep): Promise<BackupEntry | StreamTo>;
  /**
   * Called once a backup was recorded, with the entries retention (spec.backup.keep) dropped from the record: local
   * removes their files (Kubernetes: the Job pruned the claim).
   */
  backupRecorded?(dropped: BackupEntry[]): Promise<void>;
}

/** Restore drills (the `verifyBackup` step). */
export interface DrillsCapability {
  /**
   * Runs the restore drill of `step.backup` (backup/drill.ts; Kubernetes: a Job, StepPending while it runs) and
   * returns its outcome: a failed drill is an outcome, not an error.
   */
  verifyBackup(step: VerifyStep): Promise<VerifiedStatus>;
}

/** Quorum-loss recovery (planner/recovery.ts). */
export interface RecoveryCapability {
  /**
   * Takes the survivor's snapshot (Kubernetes: a Job onto the backup claim; StepPending while it runs), or names the
   * file the engine streams it to (named by the request: taken again after a crash, it replaces its file).
   */
  takeRecoverySnapshot(step: RecoverSnapshotStep): Promise<SnapshotRecord | StreamTo>;
  /**
   * Stops the members `lost` and drops their data (they join again later, empty, under the same names and URLs),
   * then restarts `survivor` in place with --force-new-cluster (once: its next restart is without the flag).
   * Idempotent: a survivor already running with the flag is left running.
   */
  forceNewCluster(survivor: string, lost: string[]): Promise<void>;
}

/** Hibernation (spec.replicas 0). */
export interface HibernationCapability {
  /** Stops `members` gracefully, keeping their data (the hibernation is recorded first). Idempotent. */
  hibernate(members: string[]): Promise<void>;
  /** Starts every hibernated member on its kept data (the record is cleared after). Idempotent. */
  wake(): Promise<void>;
}

/** Members' volumes (Kubernetes); without it spec.storage.size reaches members through the quota only. */
export interface VolumesCapability {
  /** The members' volumes as they are. */
  volumes(): Promise<VolumeObservation | undefined>;
  /**
   * Grows every member's volume to `size`: the claims of `members` expanded in place, then what makes new claims
   * (the StatefulSet, recreated with its pods orphaned). Idempotent: a claim already that large is left alone.
   */
  expandVolumes(size: string, members: string[]): Promise<void>;
}

/** Continuous backup's agent (spec.backup.continuous): a process beside the members, locally; a Deployment, on Kubernetes. */
export interface ContinuousCapability {
  /** The agent as it runs, and the configuration it should run with (none: no agent should run). */
  agent(): Promise<AgentObservation>;
  /** Starts the agent with the configuration of now (an agent running another is stopped first); says what it did. */
  startAgent(): Promise<string>;
  /** Stops the agent (idempotent); says what it did. */
  stopAgent(): Promise<string>;
}

/** The interface of each capability. */
export interface CapabilityOf {
  continuous: ContinuousCapability;
  scaling: ScalingRuntime;
  healing: HealingRuntime;
  recovery: RecoveryCapability;
  backups: BackupsCapability;
  drills: DrillsCapability;
  hibernation: HibernationCapability;
  volumes: VolumesCapability;
}

type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/**
 * A runtime with capabilities `C`: a class that says it has one (its `capabilities`) implements its interface, or it
 * does not compile (test/unit/operator/capability-type.test.ts).
 */
export type RuntimeWith<C extends Capability> = Runtime & { readonly capabilities: readonly C[] } & Intersection<CapabilityOf[C]>;

/** True when `rt` has capability `c` (and so its interface). */
export function can<C extends Capability>(rt: Runtime, c: C): rt is RuntimeWith<C> {
  return rt.capabilities.includes(c);
}

// Inputs and output of the upgrade planner. Everything here is plain data: the planner reads an observation
// and the recorded progress and returns one Step; it never learns whether members are child processes or pods.
import type { BackupEntry, BackupsStatus, SnapshotRecord } from '../api/types.js';

/** One member as observed right now. */
export interface ObservedMember {
  name: string;
  /** Member id (decimal string, as the gateway and the client library write uint64s). */
  id?: string;
  /** Release the runtime runs (or will next run) this member as: the process's SVC_VERSION, the pod's image tag. */
  configuredVersion: string;
  /** The process/pod exists and has not exited. */
  running: boolean;
  /** Why the runtime cannot keep the member running (exit status, crash loop), when it cannot. */
  failure?: string;
  /** `etcdserver` of GET /version; undefined when the member did not answer. */
  release?: string;
  /** `etcdcluster` of GET /version as this member sees it ("not_decided" possible). */
  clusterVersion?: string;
  /** GET /health answered 200. */
  healthy: boolean;
  /** `svc_server_is_leader` is 1. */
  leader: boolean;
  /** Raft applied index (Maintenance.Status). */
  appliedIndex?: number;
  /** The member's store revision (Maintenance.Status header; served without quorum). */
  revision?: number;
  /** The runtime knows this member's data is gone (local: its data dir is missing or empty); undefined: unknown. */
  dataLost?: boolean;
  /** The member runs with --force-new-cluster (a recovery's restart; it must restart without it before the cluster grows). */
  forcedNewCluster?: boolean;
  /** Hash of the member's configuration (everything of the spec that reaches it but the release); undefined: unknown. */
  configRevision?: string;
  /** Hash of the TLS certificates the member was started with; undefined: unknown or no TLS. */
  tlsRevision?: string;
  /** The runtime's evidence that the member's data is gone (it cannot come back, it must be replaced). */
  lost?: MemberLoss;
  /** The restart request (TargetRevision.restart token) its current process was started under, if any. */
  restartToken?: string;
  /** Bytes of its database file, and of them in use (Maintenance.Status); the rest a defragmentation gives back. */
  dbSize?: number;
  dbSizeInUse?: number;
}

/**
 * Why a member cannot come back with its data: its data dir (claim) is empty while its ID is in the member list
 * (DataLost), it refused to start because the cluster already has its ID (AlreadyBootstrapped: it lost its data),
 * its database is corrupt (DataCorrupt), or it reports another member ID than the cluster lists under its name
 * (MemberIdChanged). A member whose data is intact is restarted, never replaced.
 */
export type LossCause = 'DataLost' | 'AlreadyBootstrapped' | 'DataCorrupt' | 'MemberIdChanged' | 'VolumeLost' | 'NodeLost';

/** A loss cause and what showed it (a path, a log line). */
export interface MemberLoss {
  cause: LossCause;
  detail: string;
}

/** The record of one member's replacement (written before it is begun; finished once its successor is a voter). */
export interface Replacement {
  member: string;
  /** The member ID removed. */
  oldId: string;
  cause: LossCause;
  detail: string;
  startedAt: number;
  /** The successor's ID, once it is in the member list. */
  newId?: string;
  /** When the successor was seen promoted to a voting member. */
  finishedAt?: number;
}

/** Replacements by member name: the one under way (no finishedAt) and the last one of every other member. */
export type ReplacementRecord = Record<string, Replacement>;

/** What the runtime would start a member with now (compared with each member's). */
export interface TargetRevision {
  config: string;
  tls?: string;
  /** A restart asked for (`restart <cluster> [MEMBER]`): its token and the members it names; each is restarted once under it. */
  restart?: RestartRequest;
}

/** A rolling restart asked for by a person: members whose restartToken differs are restarted (reason RestartRequested). */
export interface RestartRequest {
  token: string;
  members: string[];
}

/** Why a member is restarted. */
export type RestartReason = 'VersionChange' | 'SpecChange' | 'CertificateRenewed' | 'RestartRequested';

/** The record of a rollout of a configuration or certificate change (written before each restart). */
export interface RolloutProgress {
  reason: Exclude<RestartReason, 'VersionChange'>;
  /** The target revision being rolled out ("<config>/<tls>"). */
  revision: string;
  startedAt: number;
  finishedAt?: number;
  /** Member -> when its restart was begun (ms). */
  restarts: Record<string, number>;
  /** Members seen on the target revision, healthy, in the order they got there. */
  membersDone: string[];
}

/** Everything the planner knows about the cluster at one instant. */
export interface ObservedCluster {
  /** Milliseconds since the epoch, when the observation was taken (the planner has no clock). */
  now: number;
  members: ObservedMember[];
  /** Authentication is on; undefined when it could not be found out. */
  authEnabled?: boolean;
  /** Estimated v2 data size (from a recent snapshot), bytes; undefined when unknown (treated as small). */
  v2DataBytes?: number;
  /** The cluster's member list (MemberList of the leader); undefined when it could not be read. Scaling needs it. */
  clusterMembers?: ClusterMember[];
  /** The list came from the leader (linearizable); a follower's may lag, so nothing is retired on it. */
  clusterMembersByLeader?: boolean;
  /** What members should run with; undefined: the runtime does not tell (no rollouts of configuration). */
  revision?: TargetRevision;
  /**
   * The catch-up reference: the leader's applied index read just before the followers' applied indexes were
   * (so a follower is compared with a leader index no newer than its own reading), and the write rate seen
   * across the observation (entries per second).
   */
  catchUp?: { leaderIndex: number; ratePerSecond: number };
  /** Scheduled and on-demand backups, when the runtime takes them (the record document). */
  backups?: BackupObservation;
  /** The record of member replacements, when the runtime keeps one (it can replace members). */
  replacements?: ReplacementRecord;
  /** A quorum-loss recovery asked for or under way, when the runtime can recover (the record document). */
  recovery?: RecoveryObservation;
  /** The CORRUPT alarm is raised: the members' KV hashes compared (observe.ts), undefined when it is not. */
  corruption?: CorruptionObservation;
  /** Break-glass: a person suspended reconciling (annotation svc.dev/reconcile: suspended, `local suspend`): no mutation is planned. */
  suspended?: boolean;
  /** Every member was stopped on purpose with its data kept (spec.replicas 0): waking starts them again. */
  hibernated?: boolean;
  /** The members' volumes, when the runtime has any (Kubernetes): what a larger spec.storage.size is measured against. */
  volume?: VolumeObservation;
  /** Member IDs (decimal) with the NOSPACE alarm raised (health is then read without it); undefined: none raised. */
  noSpace?: string[];
  /**
   * The alarms raised, as the leader lists them (member IDs decimal); read only when no member is healthy (an alarm
   * fails every /health); undefined: none raised or not read. What refuses writes (oncall.ts writesRefused).
   */
  alarms?: Array<{ memberId: string; alarm: string }>;
  /** Compaction and defragmentation: requests and the record (the record document). */
  maintenance?: MaintenanceObservation;
  /** What the runtime can do; undefined: everything (the planner's own tests). */
  capabilities?: readonly Capability[];
  /** Continuous backup's agent, when the runtime runs one (capability `continuous`). */
  agent?: AgentObservation;
}

/**
 * The backup agent of spec.backup.continuous as it runs and as it should: `current` and `wanted` are keys of its
 * configuration (a hash or the configuration itself); `wanted` undefined: no agent should run.
 */
export interface AgentObservation {
  running: boolean;
  current?: string;
  wanted?: string;
}

/** The members' volumes as they are (Kubernetes: the StatefulSet's claim template and each member's claim). */
export interface VolumeObservation {
  /** The size new claims get now (the StatefulSet's claim template), a quantity. */
  size: string;
  /** The storage class of the claims (the spec's, else the cluster's default), if known. */
  storageClass?: string;
  /** The class allows expansion (allowVolumeExpansion); undefined: it could not be read. */
  expandable?: boolean;
  /** Each member's claim: its requested size (a quantity). */
  claims: Record<string, string>;
}

/** Why members are defragmented. */
export type MaintenanceReason = 'NoSpace' | 'Scheduled' | 'Threshold' | 'Requested';

/** One member's defragmentation in a round: begun (recorded first), then its bytes after. */
export interface DefragRecord {
  begunAt: number;
  /** Database file bytes before (the observation's) and after (read right after it). */
  before?: number;
  after?: number;
  finishedAt?: number;
}

/** A round of maintenance: an optional compaction, then every member of `members` defragmented, one at a time. */
export interface MaintenanceRound {
  /** NoSpace: "nospace-<ms>"; Scheduled: the slot (ISO); Threshold: "threshold-<ms>"; Requested: the request token. */
  id: string;
  reason: MaintenanceReason;
  startedAt: number;
  /** The members to defragment (a request may name one); none: a compaction only (`compact`). */
  members: string[];
  /** The revision to compact at (recorded before the compaction), and whether it was done. */
  compactRevision?: number;
  compacted?: boolean;
  defrags: Record<string, DefragRecord>;
  finishedAt?: number;
}

/** The maintenance record (the record document's `maintenance`: planner/records.ts). */
export interface MaintenanceRecord {
  /** The round under way, or the last one. */
  round?: MaintenanceRound;
  /** The last scheduled slot begun (ISO). */
  lastSlot?: string;
  /** The last request token begun. */
  lastRequest?: string;
}

/**
 * A defragmentation, compaction or leadership move asked for (`local defrag|compact|move-leader`, `kubectl svc
 * defrag|compact|move-leader`: the svc.dev/maintenance-request annotation).
 */
export interface MaintenanceRequest {
  token: string;
  /**
   * defrag: every member (or `member` only); compact: the leader's history up to its revision less the retention;
   * move-leader: leadership to `member` (else the most up-to-date follower).
   */
  action: 'defrag' | 'compact' | 'move-leader';
  member?: string;
}

/** What the planner needs for maintenance besides the members. */
export interface MaintenanceObservation {
  record?: MaintenanceRecord;
  request?: MaintenanceRequest;
  /** When the cluster was created (ms): the defrag schedule's first slot comes after it. */
  created: number;
}

/**
 * What the operator found while the CORRUPT alarm is raised (writes are refused then, so the revisions stand still):
 * every running member's KV hash at one revision. A hash a strict majority of the members share is the cluster's;
 * members with another hash are lost (DataCorrupt) and replaced; once all agree, the alarm is disarmed.
 */
export interface CorruptionObservation {
  /** The member ID (decimal) the alarm was raised for (the reference 3.5's periodic check raises it for 0). */
  alarmMemberId: string;
  revision: number;
  /** Hash (and the compaction revision it covers) by member name, for the members that answered. */
  hashes: Record<string, { hash: number; compactRevision: number }>;
  /** The hash a strict majority of the members share, if any. */
  majority?: number;
}

/** A recovery request (`local recover`'s token in the state file, the svc.dev/recover annotation) and the record. */
export interface RecoveryObservation {
  /** The request token; a token the record does not carry asks for a new recovery. */
  request?: string;
  record?: RecoveryProgress;
}

/** One member as a recovery found it before touching anything (the report the CLIs print). */
export interface RecoveryMemberReport {
  name: string;
  id?: string;
  reachable: boolean;
  appliedIndex?: number;
  revision?: number;
  /** What the member loses when the survivor's data becomes the cluster's. */
  loses: string;
}

/** The record of a quorum-loss recovery (written before each of its steps; resumed from it and the observation). */
export interface RecoveryProgress {
  /** The request answered. */
  token: string;
  /** The member whose data becomes the cluster's (the highest applied index among those answering). */
  survivor: string;
  survivorId?: string;
  /** The other members (they lose their data and join again, empty) and their ids in the old member list. */
  lost: Array<{ name: string; id?: string }>;
  /** The members as found. */
  report: RecoveryMemberReport[];
  /** Kind of the recovery step begun last. */
  step: StepKind;
  startedAt: number;
  /** The survivor's snapshot, taken before anything is touched. */
  snapshot?: SnapshotRecord;
  /** Set once the cluster is back to spec.replicas, healthy. */
  finishedAt?: number;
}


/** What the planner needs to tell whether a backup is due: the record, a request token, the schedule's anchor. */
export interface BackupObservation {
  /** status.backups (Kubernetes) or the state file's record (local): what was taken, the slot and token answered. */
  record?: BackupsStatus;
  /** The on-demand request token (annotation svc.dev/backup-request, or `local backup`'s); a new one asks again. */
  request?: string;
  /** Set by a runtime that runs restore drills (runtime.verifyBackup): without it none is planned. */
  verifies?: boolean;
  /** The drill request token (annotation svc.dev/verify-request, or `local verify-backup`'s); a new one asks again. */
  verifyRequest?: string;
  /** When the cluster was created (ms): the schedule's first slot comes after it. */
  created: number;
}

/** One entry of the cluster's member list. */
export interface ClusterMember {
  id: string;
  /** The runtime member this entry is: its reported name, or (never started: no name yet) the owner of its peer URL. */
  member?: string;
  /** False for a member added to the cluster that never started (the member list shows no name for it). */
  started: boolean;
  /** A learner: counted in no quorum, promoted to a voter once caught up. */
  isLearner?: boolean;
}

/** What the orchestrator records (before each mutating step) about the upgrade under way. */
export interface UpgradeProgress {
  from: string;
  to: string;
  /** Kind of the step begun last. */
  step: StepKind;
  startedAt: number;
  /** Set when the upgrade is verified complete (or superseded). */
  finishedAt?: number;
  /** Set when the spec moved to this other version (a rollback) and the cluster settled there first. */
  supersededBy?: string;
  /** The verified pre-upgrade snapshot; the members phase begins only once it is here. */
  snapshot?: SnapshotRecord;
  /** Member -> when its restart on `to` was begun (ms). */
  restarts: Record<string, number>;
  /** Members seen running `to`, healthy and caught up, in the order they got there. */
  membersDone: string[];
  /** The hops of the path when this one began, `to` first, spec.version last (absent: a single hop). */
  hops?: string[];
}

/** Why a backup step is taken (the pre-upgrade backup is the `snapshot` step). */
export type BackupReason = 'Scheduled' | 'OnDemand';

/** Typed reasons of wait and blocked steps (they become condition reasons and event reasons). */
export type WaitCode =
  | 'Paused'
  | 'MemberUnhealthy'
  | 'MemberStarting'
  | 'NoLeader'
  | 'LeaderMoving'
  | 'CatchingUp'
  | 'WaitBetweenMembers'
  | 'ClusterVersionPending'
  | 'ClusterUnreachable'
  | 'AuthUnknown'
  | 'ScaleAfterUpgrade'
  | 'MemberListUnknown'
  | 'MemberNotInCluster'
  | 'UnknownClusterMember'
  | 'ReplacementNotSafe'
  | 'RecoverySurvivorDown'
  | 'CorruptionUndecided'
  | 'Suspended'
  | 'MaintenanceNotSafe';

export type BlockedCode =
  | 'SkipMinor'
  | 'BelowMinimumPatch'
  | 'CustomV2Data'
  | 'AlarmRaised'
  | 'DowngradeAfterCompletion'
  | 'AuthEnabledUpgradeTo35'
  | 'LargeV2DataNotAcknowledged'
  | 'MixedReleases'
  | 'MemberFailedToStart'
  | 'UnsupportedVersion'
  | 'NoSpaceNotRelieved'
  | 'VolumeExpansionNotAllowed'
  | 'VolumeShrinkRefused'
  | 'UnsupportedByRuntime'
  | 'QuorumLost';

/** The condition a blocked step sets: UpgradeBlocked for a refused or stuck upgrade, MemberFailed outside an upgrade. */
export type BlockedCondition = 'UpgradeBlocked' | 'MemberFailed' | 'NoSpace' | 'VolumeExpansion' | 'RuntimeUnsupported';

/**
 * What a runtime can do beyond running members (runtime/runtime.ts has the interface of each): the step table says
 * which a step needs (steps.ts `needs`), so the planner never plans a step the runtime cannot take.
 */
export type Capability = 'scaling' | 'healing' | 'recovery' | 'backups' | 'drills' | 'hibernation' | 'volumes' | 'continuous';

/**
 * The next thing to do. What each kind is (touches the cluster or not, its lines and reasons) is its row in
 * steps.ts: a new kind needs one there. snapshot and backup only read the cluster (a snapshot of the leader; `id` of
 * a backup is the schedule slot (ISO time) or the request token it answers). Scaling: addMember = MemberAdd, then
 * start the member joining `join` (the members before it plus itself); startMember = start a member already added
 * (resume); removeMember = MemberRemove, then stop it and
 * drop its data; retireMember = stop and drop a member no longer in the cluster (resume). Healing (healing.ts):
 * replaceMember = MemberRemove of a lost member's `id`, a fresh data dir (volume), MemberAdd as a learner and its
 * start joining `join` (each part skipped when done: resumable); promoteMember = MemberPromote of a learner caught
 * up (a scale-up's, or a replacement's: `replaced` is the cause, its Event is MemberReplaced). Quorum-loss recovery
 * (asked for, never automatic; recovery.ts): recoverSnapshot = a snapshot of the survivor; forceNewCluster = the
 * other members stopped and their data dropped, the survivor restarted in place with --force-new-cluster;
 * endForceNewCluster = the survivor restarted without the flag (before the cluster grows back by addMember);
 * recoverComplete = the cluster is back to spec.replicas: record the recovery finished. verifyBackup = a restore
 * drill of `backup` (the newest kept; none: the request is answered with a failed drill) into a scratch member,
 * which touches no member of the cluster; `id` as a backup's.
 */
export type Step =
  | { kind: 'createCluster'; version: string; replicas: number }
  | { kind: 'wait'; code: WaitCode; reason: string }
  | { kind: 'blocked'; code: BlockedCode; reason: string; condition: BlockedCondition }
  | { kind: 'snapshot'; member: string; from: string; to: string; /** The hops of the whole path from here, `to` first (upgrade-path.ts). */ hops?: string[] }
  | { kind: 'moveLeader'; from: string; to: string; toId?: string; request?: string }
  | { kind: 'backup'; reason: BackupReason; member: string; id: string }
  | { kind: 'verifyBackup'; reason: BackupReason; id: string; backup?: BackupEntry }
  | { kind: 'restartMember'; member: string; version: string; reason?: RestartReason }
  | { kind: 'addMember'; member: string; join: string[] }
  | { kind: 'startMember'; member: string; join: string[] }
  | { kind: 'removeMember'; member: string; id: string }
  | { kind: 'retireMember'; member: string }
  | { kind: 'replaceMember'; member: string; id: string; cause: LossCause; detail: string; join: string[] }
  | { kind: 'promoteMember'; member: string; id: string; replaced?: LossCause }
  | { kind: 'complete'; from: string; to: string }
  | { kind: 'steady'; version: string }
  | { kind: 'recoverSnapshot'; member: string; token: string }
  | { kind: 'forceNewCluster'; member: string; lost: string[]; token: string }
  | { kind: 'endForceNewCluster'; member: string; version: string }
  | { kind: 'recoverComplete'; member: string; token: string }
  | { kind: 'disarmAlarm'; member: string; alarm: 'CORRUPT' | 'NOSPACE'; memberId: string; /** NOSPACE: what let it go (maintenance.ts noSpaceRelief). */ relief?: string }
  | { kind: 'hibernate'; members: string[] }
  | { kind: 'hibernated'; members: number }
  | { kind: 'wake'; members: string[] }
  | { kind: 'compact'; member: string; revision: number; reason: MaintenanceReason; id: string }
  | { kind: 'defragMember'; member: string; reason: MaintenanceReason; id: string }
  | { kind: 'expandVolumes'; size: string; from: string; members: string[] }
  | { kind: 'startBackupAgent'; reason: 'NotRunning' | 'ConfigChanged' }
  | { kind: 'stopBackupAgent' };

export type StepKind = Step['kind'];

// The SvcCluster resource (svc.dev/v1alpha1): the one TypeScript source of its spec and status. The CRD
// schema is generated from (or tested against) these types; validation lives in validate.ts.

/** API group/version and kind of the resource. */
export const API_VERSION = 'svc.dev/v1alpha1';
export const KIND = 'SvcCluster';
/** The resource's plural name (the CRD's `names.plural`, the API path). */
export const PLURAL = 'svcclusters';

/**
 * Where backups go, when they are taken and how many to keep (Kubernetes). Every backup (pre-upgrade, scheduled,
 * on-demand) is a Job that writes onto a claim: spec.backup.pvc, or by default `<cluster>-backups`, which the
 * operator creates and does not delete with the cluster unless deleteWithCluster is true.
 */
export interface BackupSpec {
  /** An existing PersistentVolumeClaim to hold backups; without it the operator creates `<cluster>-backups`. */
  pvc?: string;
  /** Size of the claim the operator creates. Default spec.storage.size (1Gi). */
  size?: string;
  /** Storage class of the claim the operator creates. Default spec.storage.storageClassName. */
  storageClassName?: string;
  /** True: the claim the operator creates is owned by the SvcCluster and goes with it. Default false (kept). */
  deleteWithCluster?: boolean;
  /** Cron schedule of backups ("0 3 * * *", croner syntax, 5 or 6 fields); none: pre-upgrade and on-demand only. */
  schedule?: string;
  /** IANA time zone of the schedule. Default UTC. */
  timeZone?: string;
  /** Backups to keep (of every kind, newest first); older files are removed. Default 3. */
  keep?: number;
  /** Restore drills: on this schedule the newest backup is restored into a scratch member and its KV hash checked. */
  verify?: BackupVerifySpec;
  /**
   * Continuous backup: a backup agent watches every change after the newest full snapshot and writes delta segments
   * (every 2 s or 1000 revisions) to every object-store destination, so a restore reaches any revision since then.
   */
  continuous?: boolean;
  /**
   * Full snapshots older than this ("168h", "90m", "7d") are removed from every object-store destination (the newest
   * one always stays). Default: none (spec.backup.keep alone).
   */
  maxAge?: string;
  /**
   * Where every backup goes besides the cluster's own claim (which stays the default destination): S3-compatible
   * object stores (AWS S3, Google Cloud Storage's S3 interoperability, self-hosted stores), several at once.
   */
  destinations?: BackupDestination[];
  /**
   * For a cluster with authentication on and no client certificates: a Secret with the keys username and password
   * of a user with the root role, whom backups (snapshots, HashKV) are taken as. Locally the folder
   * <secrets dir>/<name>/ with one file per key.
   */
  credentialsSecret?: string;
}

/** One place backups go (spec.backup.destinations[]): a claim or an S3-compatible bucket. */
export interface BackupDestination {
  /** Unique among the destinations; names it in status, Events and `spec.restore.source.destination`. */
  name: string;
  /** A PersistentVolumeClaim (Kubernetes), like spec.backup.pvc. */
  pvc?: string;
  s3?: S3Destination;
}

/**
 * An S3-compatible bucket. Objects: `<prefix>/<cluster>/full/<revision>-<time>.db` (the reference's snapshot format)
 * and a `.json` manifest beside each; delta segments go under `<prefix>/<cluster>/delta/`.
 */
export interface S3Destination {
  /** https://host[:port] of the store; default AWS S3 of the region. */
  endpoint?: string;
  bucket: string;
  /** Key prefix inside the bucket (no leading or trailing "/"). */
  prefix?: string;
  /** Default us-east-1. */
  region?: string;
  /** Path-style URLs (<endpoint>/<bucket>/<key>), as most self-hosted stores want. Default false. */
  forcePathStyle?: boolean;
  /** PEM CA bundle the endpoint's certificate is checked against (besides the system's). */
  caBundle?: string;
  /** Secret whose key ca.crt is that bundle (locally: the file <secrets dir>/<name>/ca.crt). */
  caSecret?: string;
  /**
   * Secret with the keys accessKeyId and secretAccessKey (sessionToken optional); locally the folder
   * <secrets dir>/<name>/ with one file per key, as a mounted Secret. Without it: AWS_ACCESS_KEY_ID and
   * AWS_SECRET_ACCESS_KEY of the operator's environment.
   */
  credentialsSecret?: string;
}

/** spec.backup.verify: when restore drills run (croner syntax, in spec.backup.timeZone). */
export interface BackupVerifySpec {
  schedule: string;
}

/** How the rolling upgrade behaves. */
export interface UpgradeSpec {
  /** True: the upgrade stops before its next step (a step under way finishes). */
  paused?: boolean;
  /** Minimum seconds between one member's restart and the next one's. Default 0. */
  waitBetweenMembersSeconds?: number;
  /** Required to start an upgrade when the v2 data is 100 MB or more (the seed's advice). */
  acknowledgeLargeV2Data?: boolean;
}

/**
 * Compaction, defragmentation and the space quota (spec.maintenance). The operator compacts, defragments and
 * disarms NOSPACE by itself (planner/maintenance.ts); these fields say how far and when.
 */
export interface MaintenanceSpec {
  /**
   * --quota-backend-bytes of every member (a quantity: "512Mi"). Default: half of spec.storage.size, at most 8 GiB
   * (the other half leaves room for the defragmentation's copy of the database and the write-ahead log).
   */
  quotaBackendBytes?: string | number;
  /** The members' own compaction (--auto-compaction-mode and --auto-compaction-retention); also what the operator keeps when it compacts. */
  autoCompaction?: { mode?: 'periodic' | 'revision'; retention?: string };
  /** When members are defragmented by schedule or threshold (one at a time, followers first, the leader last). */
  defrag?: DefragSpec;
}

/** spec.maintenance.defrag: a cron schedule and/or a threshold, optionally inside a window. */
export interface DefragSpec {
  /** Cron schedule ("0 3 * * 0", croner syntax): every member is defragmented at each slot. */
  schedule?: string;
  /** IANA time zone of the schedule and the window. Default UTC. */
  timeZone?: string;
  /**
   * Defragment when a member's database passes a share: `fragmentation` of the file unused ("40%"), or its
   * `quotaUsage`, the file's size as a share of the quota ("80%").
   */
  threshold?: { fragmentation?: string; quotaUsage?: string };
  /** Only start a scheduled or threshold defragmentation inside this daily window ("02:00", "3h"). */
  window?: { start: string; duration: string };
}

/** Desired state of an SvcCluster. */
export interface SvcClusterSpec {
  /** Release every member should run, "<major>.<minor>.<patch>"; picks the image tag v<version>. */
  version: string;
  /** Members: odd, 1 to 7; 0 hibernates (every member stopped, its data kept; a count again wakes them). Default 3. */
  replicas: number;
  image?: { repository?: string; pullPolicy?: 'Always' | 'IfNotPresent' | 'Never'; pullSecrets?: string[] };
  /** Storage of each member's data dir; storageClassName is immutable. */
  storage?: { size?: string | number; storageClassName?: string };
  /** Quantities: integers or strings of the quantity grammar ("500m", "64Mi"). */
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  podTemplate?: {
    affinity?: Record<string, unknown>;
    tolerations?: Array<Record<string, unknown>>;
    nodeSelector?: Record<string, string>;
    labels?: Record<string, string>;
    /** Extra annotations of the member pods (the operator's own svc.dev/ keys win). */
    annotations?: Record<string, string>;
    /** Extra environment variables of the svc container (core/v1 EnvVar), after the operator's own. */
    env?: Array<{ name: string; value?: string; valueFrom?: Record<string, unknown> }>;
    /** How member pods spread over nodes and zones (core/v1 TopologySpreadConstraint); the label selector is the user's. */
    topologySpreadConstraints?: Array<Record<string, unknown>>;
    /** PriorityClass of the member pods. */
    priorityClassName?: string;
  };
  /** The client Service (<cluster>-client): its type, extra labels and annotations (the operator's own svc.dev/ keys win). */
  service?: { type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer'; labels?: Record<string, string>; annotations?: Record<string, string> };
  /** Secret names of the client and peer certificates. */
  tls?: { clientSecret?: string; peerSecret?: string };
  /** --enable-v2 for every member. */
  enableV2?: boolean;
  logging?: { logger?: 'capnslog' | 'zap'; level?: 'debug' | 'info' | 'warn' | 'error' };
  backup?: BackupSpec;
  upgrade?: UpgradeSpec;
  /**
   * Create the cluster from a backup: `pvc://<claim>/<path>` as status.backups.items[].location shows it (any
   * claim of the namespace, e.g. another cluster's `<cluster>-backups`), or a path inside this cluster's backup claim.
   */
  restore?: RestoreSpec;
  /** Quota, compaction and defragmentation. */
  maintenance?: MaintenanceSpec;
}

/**
 * Where a new cluster's data comes from: a snapshot file (`snapshot`), or the restore points of an object-store
 * destination (`source`), the newest full snapshot at or before `revision` or `time` (default the newest).
 */
export interface RestoreSpec {
  snapshot?: string;
  source?: RestoreSource;
  /** The newest restore point at or before this revision. */
  revision?: number;
  /** The newest restore point taken at or before this time (RFC 3339). */
  time?: string;
}

/** The backups a cluster is restored from: a destination of spec.backup.destinations by name, or a bucket. */
export interface RestoreSource {
  destination?: string;
  s3?: S3Destination;
  /** Whose backups (the folder under the prefix); default: the only cluster there. */
  cluster?: string;
}

/** Condition types an SvcCluster reports. */
export type ConditionType =
  // kstatus' (Flux, `kubectl wait --for=condition=Ready`): Ready = serving as specified; Reconciling = working toward
  // the spec; Stalled = cannot get there without a person (blocked upgrade, pod failure, unusable Secret)
  | 'Ready' | 'Reconciling' | 'Stalled'
  | 'Available' | 'Progressing' | 'Upgrading' | 'Degraded' | 'BackupReady' | 'BackupVerified' | 'UpgradeBlocked'
  // break-glass: the annotation svc.dev/reconcile: suspended (kubectl svc suspend); nothing is changed while True
  | 'Suspended'
  // a raised alarm (NOSPACE, CORRUPT) refuses every write while the members stay healthy (reason NoSpaceAlarm, CorruptAlarm)
  | 'WritesRefused'
  // spec.backup.continuous: the agent's destinations take its segments (False: reason Destination<Cause>)
  | 'ContinuousBackup';

/** One status condition (the Kubernetes convention). */
export interface Condition {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  /** metadata.generation the condition was computed for. */
  observedGeneration?: number;
}

/** One member as status shows it. */
export interface MemberStatus {
  name: string;
  /** Member id, hex. */
  id?: string;
  /** Release the member reports in /version (etcdserver). */
  release?: string;
  image?: string;
  ready: boolean;
  healthy: boolean;
  leader: boolean;
  /** A learner (being added or replacing a lost member), not yet a voting member. */
  learner?: boolean;
  /** The last time this member was replaced because it could not come back. */
  replaced?: MemberReplacementStatus;
}

/** Why and when a member was replaced (status.members[].replaced). */
export interface MemberReplacementStatus {
  /** DataLost, AlreadyBootstrapped, DataCorrupt, MemberIdChanged, VolumeLost or NodeLost. */
  cause: string;
  /** What showed it. */
  detail: string;
  /** When the replacement began (RFC 3339). */
  time: string;
  /** The member ID removed. */
  previousId: string;
  /** When the successor became a voting member; absent while the replacement is under way. */
  finishedAt?: string;
}

/** What is known of a snapshot of a member's database (the pre-upgrade snapshot, a backup). */
export interface SnapshotFacts {
  /** Member it was taken from. */
  member: string;
  revision: number;
  /** Database bytes. */
  size: number;
  /** sha256 of the database bytes, hex. */
  sha256: string;
  /** ISO time it was taken. */
  time: string;
  /**
   * The member's KV hash at `revision` (HashKV) when it was taken, and the compaction revision that hash was taken
   * over: what a restore drill compares. Absent when a compaction passed `revision` meanwhile, and on records of
   * older releases (a drill then checks the restore only).
   */
  kvHash?: number;
  compactRevision?: number;
}

/** The pre-upgrade snapshot (taken from the leader). */
export interface SnapshotRecord extends SnapshotFacts {
  /** File path (local) or PVC path (Kubernetes). */
  location: string;
}

/** What made a backup. */
export type BackupKind = 'scheduled' | 'pre-upgrade' | 'on-demand';

/** One backup on the claim, as status.backups.items records it. */
export interface BackupEntry extends SnapshotRecord {
  kind: BackupKind;
}

/** Where the backups of a cluster are and which were taken. */
export interface BackupsStatus {
  /** The claim every backup is written to. */
  claim: string;
  /** The backups kept on the claim, oldest first (at most spec.backup.keep). */
  items?: BackupEntry[];
  /** The scheduled time of the last scheduled backup taken. */
  lastScheduleTime?: string;
  /** When the next scheduled backup is due. */
  nextScheduleTime?: string;
  /** The svc.dev/backup-request token of the last on-demand backup taken. */
  lastRequest?: string;
  /** The last restore drill (spec.backup.verify, or asked for): the backup it restored and what it found. */
  lastVerified?: VerifiedStatus;
  /** The scheduled time of the last scheduled drill run. */
  lastVerifyScheduleTime?: string;
  /** When the next scheduled drill is due. */
  nextVerifyTime?: string;
  /** The svc.dev/verify-request token of the last drill asked for and run. */
  lastVerifyRequest?: string;
  /** Continuous backup: the newest revision the backup agent has made durable in every destination. */
  continuousRevision?: number;
  /** When the agent saw that revision. */
  continuousTime?: string;
  /** The last full snapshot the agent took itself (compaction passed it, or it was away too long), and why. */
  continuousFull?: { revision: number; time: string; reason: string };
}

/** The outcome of a restore drill (status.backups.lastVerified). */
export interface VerifiedStatus {
  /** When the drill finished. */
  time: string;
  /** The backup restored (its location as status.backups.items shows it). */
  location: string;
  /** The revision whose KV hash was compared. */
  revision: number;
  /** Passed: the restored member's KV hash equals the one recorded at backup time; Failed: it does not, or the restore did not work. */
  result: 'Passed' | 'Failed';
  /** What was compared, or why it failed. */
  message: string;
}

/** Progress of an upgrade, recorded before each mutating step so a restarted operator resumes. */
export interface UpgradeStatus {
  from: string;
  to: string;
  /** The step under way or last finished (a Step kind). */
  step: string;
  /** Members already running `to`, in upgrade order. */
  membersDone: string[];
  /** The hops of the path when this one began, `to` first and spec.version last (absent: one hop). */
  hops?: string[];
  startedAt: string;
  finishedAt?: string;
  snapshot?: SnapshotRecord;
}

export type Phase = 'Creating' | 'Running' | 'Upgrading' | 'Scaling' | 'Blocked' | 'Degraded' | 'Deleting' | 'Hibernated';

/** Observed state of an SvcCluster. */
/** A rollout of a configuration or certificate change (status.rollout). */
export interface RolloutStatus {
  /** SpecChange or CertificateRenewed. */
  reason: string;
  /** The configuration/certificate fingerprint rolled out. */
  revision: string;
  membersDone: string[];
  startedAt: string;
  finishedAt?: string;
}

/** A quorum-loss recovery (status.recovery), asked for by the svc.dev/recover annotation (`kubectl svc recover`). */
export interface RecoveryStatus {
  /** The request token (the annotation's value) answered or refused. */
  request: string;
  /** The member whose data the cluster is recovered from (the highest applied index among those answering). */
  survivor?: string;
  /** The recovery step begun last. */
  step?: string;
  /** Where the survivor's snapshot, taken before anything was touched, is (pvc://<claim>/<path>). */
  snapshot?: string;
  startedAt?: string;
  finishedAt?: string;
  /** Why the request was not acted on (the cluster has quorum...); nothing was touched. */
  refused?: string;
}

export interface SvcClusterStatus {
  observedGeneration?: number;
  phase?: Phase;
  conditions?: Condition[];
  members?: MemberStatus[];
  leader?: string;
  /** Cluster version, "<major>.<minor>.<patch>" as /version shows it. */
  clusterVersion?: string;
  /** Lowest release a member runs. */
  currentVersion?: string;
  targetVersion?: string;
  /** Ready members over desired ones, "x/y" (the READY printer column). */
  ready?: string;
  /** Members that exist (the scale subresource's status.replicas). */
  replicas?: number;
  upgrade?: UpgradeStatus;
  /** The rollout of a configuration or certificate change under way or finished last. */
  rollout?: RolloutStatus;
  /** What the operator is doing or stuck on (the STEP column): a pod problem, the upgrade's step, a wait's code. */
  step?: string;
  /** Where backups go and the ones kept. */
  backups?: BackupsStatus;
  /** The quorum-loss recovery asked for last. */
  recovery?: RecoveryStatus;
  /** Compaction, defragmentation and the quota in effect. */
  maintenance?: MaintenanceStatus;
  lastError?: string;
}

/** status.maintenance: what the operator's maintenance last did, and the quota the members run with. */
export interface MaintenanceStatus {
  /** The backend quota the members run with (bytes): spec.maintenance.quotaBackendBytes, else derived from their volumes. */
  quotaBackendBytes?: number;
  /** The last compaction the operator made: up to which revision, why, and when its round began. */
  lastCompaction?: { revision: number; reason: string; roundStartedAt: string };
  /** Each member's last defragmentation by the operator: when it ended, why, the database file's bytes before and after. */
  members?: MemberDefragStatus[];
}

/** One member's last defragmentation. */
export interface MemberDefragStatus {
  name: string;
  time: string;
  reason: string;
  before?: number;
  after?: number;
}

/** The resource. */
export interface SvcCluster {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: { name: string; namespace?: string; generation?: number; labels?: Record<string, string> };
  spec: SvcClusterSpec;
  status?: SvcClusterStatus;
}

// The one record document of a cluster: what the operator has done and is doing (ClusterRecords) and what a person
// asked for (ClusterRequests), loaded and saved as a unit by the runtime (runtime/records.ts: one annotation with a
// resourceVersion precondition on Kubernetes, one field of the local state file). The functions here are pure: they
// say what a pass records from its observation, before its step acts (write-ahead) and after it acted. A new record
// is a field of ClusterRecords, a line in the functions below, and its use in the planner: nothing else.
import type { BackupEntry, BackupsStatus, SnapshotRecord, SvcClusterSpec, VerifiedStatus } from '../api/types.js';
import { backupsState, dueOfStep } from '../backup/schedule.js';
import { beginReplacement, noteReplacements } from './healing.js';
import { beginMaintenance, finishMaintenancePart, noteMaintenance } from './maintenance.js';
import { beginStep, beginRollout, noteMembersDone, noteRollout, recordSnapshot, settle } from './progress.js';
import { beginRecovery } from './recovery.js';
import { isScalingStep } from './steps.js';
import type { Capability, MaintenanceRecord, MaintenanceRequest, ObservedCluster, RecoveryProgress, ReplacementRecord, RestartRequest, RolloutProgress, Step, UpgradeProgress } from './types.js';

/** The scaling step begun last (written before it acts) and the initial cluster the member that joined last got. */
export interface ScalingRecord {
  /** spec.replicas being pursued. */
  replicas: number;
  /** addMember, startMember, removeMember, retireMember. */
  step: string;
  member: string;
  startedAt: string;
  /** The initial cluster (member names) of the member that joined last (Kubernetes: the ConfigMap carries it). */
  join?: string[];
}

/** What the operator has done and is doing to one cluster: everything a restarted operator resumes from. */
export interface ClusterRecords {
  /** The upgrade under way or finished last (status.upgrade is its readable form). */
  progress?: UpgradeProgress;
  /** The rollout of a configuration or certificate change under way or finished last (status.rollout). */
  rollout?: RolloutProgress;
  /** The scaling step begun last. */
  scaling?: ScalingRecord;
  /** Member replacements: the one under way and the last of each member (healing.ts). */
  replacements?: ReplacementRecord;
  /** The quorum-loss recovery under way or finished last (recovery.ts). */
  recovery?: RecoveryProgress;
  /** Compaction and defragmentation: the round under way or finished last, the slot and request answered. */
  maintenance?: MaintenanceRecord;
  /** Scheduled and on-demand backups and drills: what was taken, the slots and requests answered (status.backups). */
  backups?: BackupsStatus;
  /** spec.replicas 0: the number of members stopped with their data (cleared once they are started again). */
  hibernated?: number;
  /** When every initial member had started once (Kubernetes: from then on no member bootstraps). */
  formed?: string;
  /** Continuous backup's agent: the last start or stop begun, and why. */
  agent?: { step: 'startBackupAgent' | 'stopBackupAgent'; reason?: string; at: string };
}

/** What a person asked for (the operator reads these and answers them in its records; it never writes them). */
export interface ClusterRequests {
  /** An on-demand backup: a token the backups record has not answered. */
  backup?: string;
  /** A restore drill: a token the backups record has not answered. */
  verify?: string;
  /** A quorum-loss recovery: a token the recovery record does not carry. */
  recover?: string;
  /** A rolling restart: members restarted once under its token. */
  restart?: RestartRequest;
  /** A defragmentation, compaction or leadership move. */
  maintenance?: MaintenanceRequest;
  /** Break-glass: no mutation until resumed. */
  suspended?: boolean;
}

/** The cluster facts the records are read against. */
export interface RecordsCluster {
  name: string;
  /** When the cluster was created (ms): schedules count from it. */
  created: number;
  /** Where backups go, as the backups record names it (local: its folder; default the backup claim). */
  backupsAt?: string;
}

/** The document as loaded: its records, the requests and the version a save must match. */
export interface RecordsDocument {
  records: ClusterRecords;
  requests: ClusterRequests;
  /** resourceVersion on Kubernetes, a counter locally: a save against another version is refused. */
  version: string;
  cluster: RecordsCluster;
}

/** The runtime has capability `c` (an observation that does not say: every runtime, as the planner's own tests). */
const has = (o: ObservedCluster, c: Capability): boolean => o.capabilities?.includes(c) ?? true;

/** The observation with what the records and requests say (the planner reads them there). */
export function observeRecords(o: ObservedCluster, doc: RecordsDocument): void {
  const { records: r, requests: q, cluster } = doc;
  if (q.suspended) o.suspended = true;
  if (r.hibernated !== undefined) o.hibernated = true;
  if (has(o, 'backups')) {
    o.backups = { record: r.backups, request: q.backup, created: cluster.created, ...(has(o, 'drills') ? { verifies: true } : {}), ...(q.verify !== undefined ? { verifyRequest: q.verify } : {}) };
  }
  if (has(o, 'recovery')) o.recovery = { ...(q.recover !== undefined ? { request: q.recover } : {}), ...(r.recovery ? { record: r.recovery } : {}) };
  o.maintenance = { ...(r.maintenance ? { record: r.maintenance } : {}), ...(q.maintenance ? { request: q.maintenance } : {}), created: cluster.created };
  if (has(o, 'healing') && r.replacements) o.replacements = r.replacements;
}

/** Field by field: the same object where nothing changed, so that an unchanged document is not written. */
function withFields(r: ClusterRecords, next: Partial<ClusterRecords>): ClusterRecords {
  let out = r;
  for (const [k, v] of Object.entries(next) as Array<[keyof ClusterRecords, unknown]>) {
    if (out[k] === v) continue;
    if (out === r) out = { ...r };
    if (v === undefined) delete out[k];
    else (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** The records with what the observation shows (members done, replacements promoted, rounds finished). */
export function noteObserved(r: ClusterRecords, o: ObservedCluster): ClusterRecords {
  return withFields(r, {
    progress: noteMembersDone(r.progress, o),
    rollout: noteRollout(r.rollout, o, o.now),
    ...(has(o, 'healing') ? { replacements: noteReplacements(r.replacements, o) } : {}),
    maintenance: noteMaintenance(r.maintenance, o),
    // every member up and answering at once: the cluster formed (no member bootstraps again)
    ...(r.formed === undefined && o.members.length > 0 && o.members.every((m) => m.running && m.healthy) ? { formed: new Date(o.now).toISOString() } : {}),
  });
}

/** The records once the planner found nothing to do on `step.version`: an unfinished upgrade elsewhere is closed. */
export function noteSteady(r: ClusterRecords, version: string, now: number): ClusterRecords {
  return withFields(r, { progress: settle(r.progress, version, now) });
}

/** The records to write BEFORE `step` acts (write-ahead): each record the step begins or moves on. */
export function recordBefore(r: ClusterRecords, step: Step, o: ObservedCluster, spec: SvcClusterSpec): ClusterRecords {
  return withFields(r, {
    scaling: beginScaling(r.scaling, step, spec, o.now),
    ...(step.kind === 'replaceMember' && has(o, 'healing') ? { replacements: beginReplacement(r.replacements, step, o.now) } : {}),
    progress: beginStep(r.progress, step, o.now),
    rollout: beginRollout(r.rollout, step, o.revision, o.now),
    ...(has(o, 'recovery') ? { recovery: beginRecovery(r.recovery, step, o, o.now) } : {}),
    maintenance: beginMaintenance(r.maintenance, step, o),
    ...(step.kind === 'startBackupAgent' || step.kind === 'stopBackupAgent' ? { agent: { step: step.kind, ...('reason' in step ? { reason: step.reason } : {}), at: new Date(o.now).toISOString() } } : {}),
    // the member count survives the members' stop, so that a crash half-way still wakes every one
    ...(step.kind === 'hibernate' && r.hibernated === undefined ? { hibernated: Math.max(step.members.length, o.members.length) } : {}),
  });
}

/**
 * The scaling record before a scaling step or a replacement (whose successor joins `join`): the step and the join list
 * the member that joins last gets (carried over steps without one). Looked at again, the step keeps its start.
 */
function beginScaling(prev: ScalingRecord | undefined, step: Step, spec: SvcClusterSpec, now: number): ScalingRecord | undefined {
  if (!isScalingStep(step) && step.kind !== 'replaceMember') return prev;
  const join = 'join' in step ? step.join : prev?.join;
  const replicas = step.kind === 'replaceMember' ? prev?.replicas ?? spec.replicas : spec.replicas;
  const next: ScalingRecord = { replicas, step: step.kind, member: step.member, startedAt: new Date(now).toISOString(), ...(join ? { join } : {}) };
  const same = (x: ScalingRecord | undefined) => JSON.stringify({ ...x, startedAt: '' });
  return same(next) === same(prev) ? prev : next;
}

/** What a step's act produced. */
export interface StepOutcome {
  snapshot?: SnapshotRecord;
  backup?: BackupEntry;
  verified?: VerifiedStatus;
  /** A defragmented member's database bytes after. */
  defragAfter?: number;
  /** The time the act ended (ms). */
  now: number;
}

/** The records to write AFTER `step` acted: its result (a snapshot, a backup, a drill, a part of a round). */
export function recordAfter(r: ClusterRecords, step: Step, out: StepOutcome, spec: SvcClusterSpec, cluster: RecordsCluster): ClusterRecords {
  const now = new Date(out.now);
  const backups = (extra: { taken?: BackupEntry; done?: ReturnType<typeof dueOfStep>['due']; verified?: { outcome: VerifiedStatus; done: ReturnType<typeof dueOfStep>['due'] } }) =>
    backupsState({ name: cluster.name, ...(cluster.backupsAt ? { where: cluster.backupsAt } : {}), spec, previous: r.backups, created: new Date(cluster.created), now, ...extra });
  switch (step.kind) {
    case 'recoverSnapshot':
      return out.snapshot && r.recovery ? withFields(r, { recovery: { ...r.recovery, snapshot: out.snapshot } }) : r;
    case 'snapshot':
      return out.snapshot && r.progress ? withFields(r, { progress: recordSnapshot(r.progress, out.snapshot) }) : r;
    case 'backup':
      return out.backup ? withFields(r, { backups: backups({ taken: out.backup, done: dueOfStep(step).due }) }) : r;
    case 'verifyBackup':
      return out.verified ? withFields(r, { backups: backups({ verified: { outcome: out.verified, done: dueOfStep(step).due } }) }) : r;
    case 'compact':
    case 'defragMember':
      return r.maintenance ? withFields(r, { maintenance: finishMaintenancePart(r.maintenance, step, out.now, out.defragAfter) }) : r;
    case 'wake':
      return withFields(r, { hibernated: undefined });
    default:
      return r;
  }
}

/** The records a document JSON holds (a malformed one is none: the planner re-observes). */
export function parseRecords(text: string | undefined): ClusterRecords | undefined {
  if (!text) return undefined;
  try {
    const r = JSON.parse(text) as ClusterRecords;
    return r !== null && typeof r === 'object' && !Array.isArray(r) ? r : undefined;
  } catch {
    return undefined;
  }
}

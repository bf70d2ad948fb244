// Scheduled and on-demand backups of the Kubernetes controller, beside the engine's pass: when a pass finds the
// cluster steady, a due backup (an svc.dev/backup-request token not yet recorded, or a schedule slot) runs as a
// backup Job onto the cluster's claim. Nothing waits: a running Job is a requeue (StepPending), and a steady
// cluster is requeued at its next scheduled time. status.backups is the record; what this process recorded is
// also kept here, because the informer's copy of the status may lag behind a write.
import type { BackupEntry, BackupsStatus, SnapshotRecord, SvcClusterSpec } from '../api/types.js';
import type { ObservedCluster } from '../planner/types.js';
import { StepPending } from '../runtime/runtime.js';
import { JobFailure, type ClusterJobs } from '../runtime/kubernetes/backup-job.js';
import { backupsState, describeBackup, dueBackup, msUntilNext, retain, DEFAULT_KEEP, type DueBackup } from './schedule.js';

/** A failed scheduled or on-demand backup is tried again after this long (status shows the failure meanwhile). */
export const BACKUP_RETRY_MS = 60_000;

export interface BackupRunInput {
  key: string;
  name: string;
  spec: SvcClusterSpec;
  jobs: ClusterJobs;
  observed: ObservedCluster;
  /** The svc.dev/backup-request annotation. */
  request?: string;
  /** status.backups as stored. */
  stored?: BackupsStatus;
  preUpgrade?: SnapshotRecord;
  created: Date;
  now: Date;
  /** The database size a member reports (the Job's deadline follows it). */
  dbBytes(member: string): Promise<number | undefined>;
}

export interface BackupOutcome {
  /** An Event to record. */
  event?: { type: 'Normal' | 'Warning'; reason: string; message: string };
  /** When to look again (a Job running, a retry, the next slot); undefined: nothing scheduled. */
  requeueMs?: number;
}

export class BackupTracker {
  /** status.backups as this process recorded it last, per cluster. */
  private readonly written = new Map<string, BackupsStatus>();
  /** The last failure of a scheduled or on-demand backup, per cluster, and when to try again. */
  private readonly failures = new Map<string, { failure: JobFailure; retryAt: number }>();
  /** Jobs announced by an Event (once per Job). */
  private readonly announced = new Map<string, string>();

  forget(key: string): void {
    this.written.delete(key);
    this.failures.delete(key);
    this.announced.delete(key);
  }

  /** The failure status shows until a backup succeeds. */
  failure(key: string): JobFailure | undefined {
    return this.failures.get(key)?.failure;
  }

  /** The stored record merged with this process's newer one. */
  private merged(key: string, stored: BackupsStatus | undefined, keep: number): BackupsStatus | undefined {
    const mine = this.written.get(key);
    if (!mine || !stored) return mine ?? stored;
    const items = retain([...(stored.items ?? []), ...(mine.items ?? [])], keep);
    const later = (a?: string, b?: string) => (a === undefined ? b : b === undefined ? a : a > b ? a : b);
    return dropEmpty({ ...stored, ...mine, items, lastScheduleTime: later(stored.lastScheduleTime, mine.lastScheduleTime) });
  }

  /** status.backups to publish for this pass. */
  state(i: Pick<BackupRunInput, 'key' | 'name' | 'spec' | 'stored' | 'preUpgrade' | 'created' | 'now'>, taken?: BackupEntry, done?: DueBackup): BackupsStatus {
    const previous = this.merged(i.key, i.stored, i.spec.backup?.keep ?? DEFAULT_KEEP);
    const next = backupsState({ name: i.name, spec: i.spec, previous, preUpgrade: i.preUpgrade, taken, done, created: i.created, now: i.now });
    this.written.set(i.key, next);
    return next;
  }

  /** A steady cluster: takes the backup that is due, if any (one look at its Job). */
  async run(i: BackupRunInput): Promise<BackupOutcome> {
    const state = this.state(i);
    const due = dueBackup({ spec: i.spec, request: i.request, backups: state, created: i.created, now: i.now });
    const nextMs = msUntilNext(state, i.now);
    if (!due) return { requeueMs: nextMs };
    const failed = this.failures.get(i.key);
    if (failed && i.now.getTime() < failed.retryAt) return { requeueMs: failed.retryAt - i.now.getTime() };
    const leader = i.observed.members.find((m) => m.leader && m.healthy) ?? i.observed.members.find((m) => m.healthy);
    if (!leader) return { requeueMs: 5000 };
    const id = due.kind === 'scheduled' ? due.slot.toISOString() : due.token;
    const what = due.kind === 'scheduled' ? `scheduled backup (${id})` : `on-demand backup (request ${id})`;
    try {
      const entry = await i.jobs.takeBackup(due.kind, leader.name, id, i.now, () => i.dbBytes(leader.name));
      this.failures.delete(i.key);
      this.announced.delete(i.key);
      const after = this.state(i, entry, due);
      const more = msUntilNext(after, i.now);
      // another request or slot may be due at once: look again soon
      return { event: { type: 'Normal', reason: 'BackupTaken', message: describeBackup(entry) }, requeueMs: more === undefined ? 200 : Math.min(more, 200) };
    } catch (e) {
      if (e instanceof StepPending) {
        if (this.announced.get(i.key) === id) return { requeueMs: e.retryMs };
        this.announced.set(i.key, id);
        return { event: { type: 'Normal', reason: 'BackupStarted', message: `${what} of ${leader.name} onto claim ${state.claim}` }, requeueMs: e.retryMs };
      }
      const failure = e instanceof JobFailure ? e : new JobFailure('BackupJobFailed', (e as Error).message);
      this.failures.set(i.key, { failure, retryAt: i.now.getTime() + BACKUP_RETRY_MS });
      this.announced.delete(i.key);
      return { event: { type: 'Warning', reason: failure.reason, message: `${what}: ${failure.message}` }, requeueMs: BACKUP_RETRY_MS };
    }
  }
}

function dropEmpty(b: BackupsStatus): BackupsStatus {
  const out = { ...b };
  if (!out.items || out.items.length === 0) delete out.items;
  if (out.lastScheduleTime === undefined) delete out.lastScheduleTime;
  if (out.lastRequest === undefined) delete out.lastRequest;
  if (out.nextScheduleTime === undefined) delete out.nextScheduleTime;
  return out;
}

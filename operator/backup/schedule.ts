// The pure rules of backups: the cron schedule (api/cron.ts), what is due at an instant (the planner's `backup` step),
// the record kept in status.backups or the local state file (retention), the claim's name and size, and how long a
// backup Job may run. No clock inside: every function takes `now`, so the unit tests run on fixed clocks.
import type { BackupEntry, BackupKind, BackupsStatus, SnapshotRecord, SvcClusterSpec, VerifiedStatus } from '../api/types.js';
import { cron, scheduleProblem } from '../api/cron.js';

/** Backups kept when spec.backup.keep is not set. */
export const DEFAULT_KEEP = 3;

/** The claim every backup of cluster `name` goes to. */
export function backupClaimName(name: string, spec: SvcClusterSpec): string {
  return spec.backup?.pvc ?? `${name}-backups`;
}

/** The first scheduled time after `after`, or undefined (no schedule, or one that never fires again). */
export function nextScheduleTime(schedule: string, timeZone: string | undefined, after: Date): Date | undefined {
  return cron(schedule, timeZone).nextRun(after) ?? undefined;
}

/**
 * The scheduled time a backup is due for at `now`, if one is: a slot after the last one taken (or after the
 * cluster's creation when none was) and not after `now`. Missed slots (the operator was down, the cluster was
 * upgrading) give one backup, not one each, like a CronJob's single catch-up: the slot is the latest one, so the
 * next is counted from it.
 */
export function dueSlot(schedule: string, timeZone: string | undefined, anchor: Date, now: Date): Date | undefined {
  const c = cron(schedule, timeZone);
  const next = c.nextRun(anchor);
  if (!next || next.getTime() > now.getTime()) return undefined;
  // the latest slot at or before now (previousRuns counts a slot in the reference's own millisecond)
  const latest = c.previousRuns(1, new Date(now.getTime() + 1))[0];
  return latest && latest.getTime() > next.getTime() && latest.getTime() <= now.getTime() ? latest : next;
}

/** The backup a steady cluster should take now, if any: an on-demand request first, then the schedule. */
export type DueBackup = { kind: 'on-demand'; token: string } | { kind: 'scheduled'; slot: Date };

export interface DueInput {
  spec: SvcClusterSpec;
  /** The value of the svc.dev/backup-request annotation. */
  request?: string;
  backups?: BackupsStatus;
  /** The SvcCluster's creation (the schedule's anchor before any scheduled backup). */
  created: Date;
  now: Date;
}

export function dueBackup(i: DueInput): DueBackup | undefined {
  if (i.request !== undefined && i.request !== '' && i.request !== i.backups?.lastRequest) return { kind: 'on-demand', token: i.request };
  const schedule = i.spec.backup?.schedule;
  if (!schedule || scheduleProblem(schedule, i.spec.backup?.timeZone)) return undefined;
  const last = i.backups?.lastScheduleTime ? new Date(i.backups.lastScheduleTime) : undefined;
  const slot = dueSlot(schedule, i.spec.backup?.timeZone, last && last > i.created ? last : i.created, i.now);
  return slot ? { kind: 'scheduled', slot } : undefined;
}

/** What a backup step answers (a slot or a token), as the record keeps it; its kind as status.backups.items says. */
export function dueOfStep(step: { reason: 'Scheduled' | 'OnDemand'; id: string }): { due: DueBackup; kind: Exclude<BackupKind, 'pre-upgrade'> } {
  return step.reason === 'Scheduled' ? { due: { kind: 'scheduled', slot: new Date(step.id) }, kind: 'scheduled' } : { due: { kind: 'on-demand', token: step.id }, kind: 'on-demand' };
}

/** Milliseconds until the next scheduled backup or drill (at least 0), or undefined without a schedule. */
export function msUntilNext(backups: BackupsStatus | undefined, now: Date): number | undefined {
  const times = [backups?.nextScheduleTime, backups?.nextVerifyTime].filter((t): t is string => t !== undefined).map((t) => Date.parse(t));
  if (times.length === 0) return undefined;
  return Math.max(0, Math.min(...times) - now.getTime());
}

/** Keeps the newest `keep` entries (by time; the file the Job prunes by mtime is the same), oldest first. */
export function retain(items: BackupEntry[], keep: number): BackupEntry[] {
  const byLocation = new Map<string, BackupEntry>();
  for (const it of items) byLocation.set(it.location, it);
  return [...byLocation.values()].sort((a, b) => a.time.localeCompare(b.time)).slice(-keep);
}

export interface BackupsStateInput {
  name: string;
  /** Where the backups go, as the record names it; default the claim (backupClaimName). The local runtime: its folder. */
  where?: string;
  spec: SvcClusterSpec;
  /** status.backups as stored (and what this process recorded since, merged in by the caller). */
  previous?: BackupsStatus;
  /** The pre-upgrade snapshot recorded in the upgrade's progress: it is a backup like the others. */
  preUpgrade?: SnapshotRecord;
  /** A backup taken in this pass. */
  taken?: BackupEntry;
  /** What the taken backup answered: a slot or a request. */
  done?: DueBackup;
  /** A restore drill run in this pass, and the slot or request it answered (backup/verify.ts). */
  verified?: { outcome: VerifiedStatus; done: DueBackup };
  created: Date;
  now: Date;
}

/** status.backups after this pass: the claim, the entries kept, the schedule's times. */
export function backupsState(i: BackupsStateInput): BackupsStatus {
  const keep = i.spec.backup?.keep ?? DEFAULT_KEEP;
  const prev = i.previous;
  const items = [...(prev?.items ?? [])];
  // the pre-upgrade snapshot is recorded in the progress first (write-ahead); it joins the list once, by location,
  // unless it was pruned already (older than everything kept)
  if (i.preUpgrade && !items.some((x) => x.location === i.preUpgrade!.location)) {
    const oldest = items.length >= keep ? items.map((x) => x.time).sort()[0] : undefined;
    if (oldest === undefined || i.preUpgrade.time >= oldest) items.push({ ...i.preUpgrade, kind: 'pre-upgrade' });
  }
  if (i.taken) items.push(i.taken);
  const out: BackupsStatus = { claim: i.where ?? backupClaimName(i.name, i.spec) };
  const kept = retain(items, keep);
  if (kept.length > 0) out.items = kept;
  let lastScheduleTime = prev?.lastScheduleTime;
  let lastRequest = prev?.lastRequest;
  if (i.done?.kind === 'scheduled') lastScheduleTime = i.done.slot.toISOString();
  if (i.done?.kind === 'on-demand') lastRequest = i.done.token;
  if (lastScheduleTime) out.lastScheduleTime = lastScheduleTime;
  if (lastRequest !== undefined) out.lastRequest = lastRequest;
  const next = nextOf(i.spec.backup?.schedule, i.spec, lastScheduleTime, i.created);
  if (next) out.nextScheduleTime = next;
  // the restore drills' part (backup/verify.ts)
  const lastVerified = i.verified?.outcome ?? prev?.lastVerified;
  let lastVerifyScheduleTime = prev?.lastVerifyScheduleTime;
  let lastVerifyRequest = prev?.lastVerifyRequest;
  if (i.verified?.done.kind === 'scheduled') lastVerifyScheduleTime = i.verified.done.slot.toISOString();
  if (i.verified?.done.kind === 'on-demand') lastVerifyRequest = i.verified.done.token;
  if (lastVerified) out.lastVerified = lastVerified;
  if (lastVerifyScheduleTime) out.lastVerifyScheduleTime = lastVerifyScheduleTime;
  if (lastVerifyRequest !== undefined) out.lastVerifyRequest = lastVerifyRequest;
  // counted from the later of the last slot run and the last drill's end, as dueVerify counts (backup/verify.ts)
  const verifyAnchor = [lastVerifyScheduleTime, lastVerified?.time].filter((t): t is string => t !== undefined).sort((a, b) => Date.parse(a) - Date.parse(b)).at(-1);
  const nextVerify = nextOf(i.spec.backup?.verify?.schedule, i.spec, verifyAnchor, i.created);
  if (nextVerify) out.nextVerifyTime = nextVerify;
  return out;
}

/** The next run of `schedule` after the last slot taken (or the creation), ISO; undefined without a usable schedule. */
function nextOf(schedule: string | undefined, spec: SvcClusterSpec, lastSlot: string | undefined, created: Date): string | undefined {
  if (!schedule || scheduleProblem(schedule, spec.backup?.timeZone)) return undefined;
  const last = lastSlot ? new Date(lastSlot) : undefined;
  return nextScheduleTime(schedule, spec.backup?.timeZone, last && last > created ? last : created)?.toISOString();
}

/** The deadline's parts: a fixed start-up allowance, a conservative streaming rate, a floor and a cap. */
export const JOB_DEADLINE = { baseSeconds: 120, bytesPerSecond: 4 * 2 ** 20, minSeconds: 120, maxSeconds: 6 * 3600 } as const;

/**
 * activeDeadlineSeconds of a backup or restore Job for a database of `bytes`: 120 s to schedule the pod, pull
 * the image and connect, plus the bytes at 4 MiB/s (a slow disk or a busy leader streams faster than that), at
 * least 120 s and at most 6 h. Unknown size: the size of the volume it lives on, else the floor.
 */
export function jobDeadlineSeconds(bytes: number | undefined): number {
  const b = bytes !== undefined && Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
  const s = Math.ceil(JOB_DEADLINE.baseSeconds + b / JOB_DEADLINE.bytesPerSecond);
  return Math.min(JOB_DEADLINE.maxSeconds, Math.max(JOB_DEADLINE.minSeconds, s));
}

/** The file name of a scheduled or on-demand backup (inside the cluster's folder on the claim). */
export function backupFileFor(kind: Exclude<BackupKind, 'pre-upgrade'>, member: string, at: Date): string {
  return `${member}-${kind}-${at.toISOString().replace(/[:.]/g, '-')}.db`;
}

/** One line for the Event and the condition about a backup taken. */
export function describeBackup(b: BackupEntry): string {
  return `${b.kind} backup of ${b.member} at ${b.location}: revision ${b.revision}, ${b.size} bytes, sha256 ${b.sha256}`;
}

/** BackupReady without a failing Job: True once a backup is recorded, saying where the newest one is. */
export function backupReadyState(backups: BackupsStatus | undefined, preUpgrade: SnapshotRecord | undefined): { ok: boolean; reason: string; message: string } {
  const newest = backups?.items?.[backups.items.length - 1];
  if (newest) return { ok: true, reason: 'SnapshotTaken', message: `newest backup (${newest.kind}, ${newest.time}) at ${newest.location}; ${backups!.items!.length} kept on claim ${backups!.claim}` };
  if (preUpgrade) return { ok: true, reason: 'SnapshotTaken', message: `snapshot at ${preUpgrade.location}` };
  return { ok: false, reason: 'NoSnapshot', message: backups ? `no backup taken yet; backups go to claim ${backups.claim}` : 'no pre-upgrade snapshot recorded' };
}

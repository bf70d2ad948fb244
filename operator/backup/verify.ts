// The pure rules of restore drills (spec.backup.verify): when one is due, which backup it restores, how its outcome
// is judged and shown (status.backups.lastVerified, the BackupVerified condition). Running one is drill.ts. No clock
// inside: every function takes `now`.
import type { BackupEntry, BackupsStatus, SvcClusterSpec, VerifiedStatus } from '../api/types.js';
import { scheduleProblem } from '../api/cron.js';
import { dueSlot, type DueBackup } from './schedule.js';
import type { RestorePoint } from './restore-points.js';

export interface DueVerifyInput {
  spec: SvcClusterSpec;
  /** The value of the svc.dev/verify-request annotation (locally: `local verify-backup`'s token). */
  request?: string;
  backups?: BackupsStatus;
  /** The SvcCluster's creation (the schedule's anchor before any scheduled drill). */
  created: Date;
  now: Date;
}

/**
 * The drill due now, if any: a request not yet answered first, then the latest spec.backup.verify slot after the
 * last one run and after the last drill finished (missed slots give one drill, as with backups; slots that passed
 * while a drill ran give none, so a schedule more frequent than a drill lasts cannot keep the loop drilling). A
 * scheduled drill waits for a first backup (the slot stays due); a request is answered even without one (with a
 * failed drill that says so).
 */
export function dueVerify(i: DueVerifyInput): DueBackup | undefined {
  if (i.request !== undefined && i.request !== '' && i.request !== i.backups?.lastVerifyRequest) return { kind: 'on-demand', token: i.request };
  const schedule = i.spec.backup?.verify?.schedule;
  if (!schedule || scheduleProblem(schedule, i.spec.backup?.timeZone) || !newestBackup(i.backups)) return undefined;
  const anchor = Math.max(i.created.getTime(), ...[i.backups?.lastVerifyScheduleTime, i.backups?.lastVerified?.time].map((t) => (t ? Date.parse(t) : 0)));
  const slot = dueSlot(schedule, i.spec.backup?.timeZone, new Date(anchor), i.now);
  return slot ? { kind: 'scheduled', slot } : undefined;
}

/** The backup a drill restores: the newest one kept. */
export function newestBackup(backups: BackupsStatus | undefined): BackupEntry | undefined {
  const items = backups?.items ?? [];
  return items.length === 0 ? undefined : [...items].sort((a, b) => a.time.localeCompare(b.time)).at(-1);
}

/** What a drill measured: the restored member's KV hash at the backup's revision (undefined: it got none). */
export interface DrillMeasure {
  /** The restored member's HashKV at the revision, with the compaction revision it was taken over. */
  hash?: number;
  compactRevision?: number;
  /** Why no hash was read (the file failed its checksum, the member did not start...). */
  error?: string;
}

/**
 * The outcome of a drill of `backup`: Passed only when the restored member's KV hash equals the one recorded at
 * backup time over the same compaction revision. A backup recorded without a hash (an older release) passes on a
 * restore that serves its revision, and says that only the restore was checked.
 */
export function judgeDrill(backup: BackupEntry, m: DrillMeasure, now: Date): VerifiedStatus {
  const base = { time: now.toISOString(), location: backup.location, revision: backup.revision };
  const failed = (message: string): VerifiedStatus => ({ ...base, result: 'Failed', message });
  if (m.error !== undefined) return failed(`restoring ${backup.location} failed: ${m.error}`);
  if (m.hash === undefined) return failed(`the member restored from ${backup.location} gave no KV hash at revision ${backup.revision}`);
  if (backup.kvHash === undefined) {
    return { ...base, result: 'Passed', message: `restored and served revision ${backup.revision} (KV hash ${m.hash}); no hash was recorded with this backup, so its content was not compared` };
  }
  if (backup.compactRevision !== undefined && m.compactRevision !== undefined && backup.compactRevision !== m.compactRevision) {
    return failed(`the restored member is compacted at revision ${m.compactRevision}, the cluster was at ${backup.compactRevision} when ${backup.location} was taken: the backup does not hold the history it was recorded with`);
  }
  if (m.hash !== backup.kvHash) {
    return failed(`KV hash at revision ${backup.revision} of the member restored from ${backup.location} is ${m.hash}, the cluster's was ${backup.kvHash} when it was taken: the backup does not hold the data it was recorded with (a file of another cluster, or altered)`);
  }
  return { ...base, result: 'Passed', message: `restored ${backup.location} into a scratch member: KV hash at revision ${backup.revision} is ${m.hash}, as recorded at backup time` };
}

/**
 * What a drill of a delta chain found: the segments `segments` from the full snapshot at `base` to revision `end`,
 * read (`error`: a broken one, a replay that does not add up, naming it) or replayed into a scratch member whose
 * keyspace hash is `replayed`; `cluster` is the cluster's at `end` (or why it cannot tell: compacted past it).
 */
export interface ChainMeasure {
  location: string;
  base: number;
  end: number;
  segments: number;
  error?: string;
  replayed?: { hash: string; keys: number };
  cluster?: { hash: string; keys: number } | { unknown: string };
}

/**
 * The outcome of a drill of a delta chain: Passed when the replayed keyspace at its end hashes as the cluster's does
 * there; when the cluster can no longer tell (compacted past the end), Passed saying the content was not compared.
 */
export function judgeChain(m: ChainMeasure, now: Date): VerifiedStatus {
  const base = { time: now.toISOString(), location: m.location, revision: m.end };
  const replay = `replaying ${m.segments} delta segment(s) of ${m.location} from revision ${m.base} to ${m.end}`;
  if (m.error !== undefined || !m.replayed) return { ...base, result: 'Failed', message: `${replay} failed: ${m.error ?? 'no keyspace hash was read'}` };
  const own = `${replay}: the keyspace at ${m.end} (${m.replayed.keys} key(s)) hashes ${m.replayed.hash.slice(0, 16)}`;
  if (!m.cluster || 'unknown' in m.cluster) return { ...base, result: 'Passed', message: `${own}; not compared: ${m.cluster ? m.cluster.unknown : 'the cluster was not asked'}` };
  if (m.cluster.hash !== m.replayed.hash) {
    return { ...base, result: 'Failed', message: `${own}, the cluster's (${m.cluster.keys} key(s)) ${m.cluster.hash.slice(0, 16)}: the segments do not hold the changes the cluster made; a new full snapshot (an on-demand backup) is a restore point that does not need them` };
  }
  return { ...base, result: 'Passed', message: `${own}, as the cluster's` };
}

/** The drill answering a request when no backup exists yet. */
export function noBackupToVerify(now: Date): VerifiedStatus {
  return { time: now.toISOString(), location: '', revision: 0, result: 'Failed', message: 'no backup recorded yet: take one first (spec.backup.schedule, or an on-demand backup)' };
}

/** A destination's restore point as the backup a drill judges (`location`: how messages name it). */
export function pointEntry(point: RestorePoint, location: string): BackupEntry {
  return {
    location, member: point.member, revision: point.revision, size: point.size, sha256: point.sha256, time: point.time, kind: 'scheduled',
    ...(point.hashKV !== undefined ? { kvHash: point.hashKV, compactRevision: point.compactRevision } : {}),
  };
}

/**
 * One outcome of drills of several backups (the claim's newest and each object-store destination's): Passed when all
 * passed, else Failed with the failures first; the first drilled is the one named.
 */
export function combineDrills(outcomes: readonly VerifiedStatus[]): VerifiedStatus {
  if (outcomes.length === 1) return outcomes[0];
  const failed = outcomes.filter((o) => o.result === 'Failed');
  const first = failed[0] ?? outcomes[0];
  return { ...first, result: failed.length > 0 ? 'Failed' : 'Passed', message: [...failed, ...outcomes.filter((o) => o.result === 'Passed')].map((o) => o.message).join('; ') };
}

/** The BackupVerified condition of a drill's outcome (none before the first drill). */
export function backupVerifiedState(backups: BackupsStatus | undefined): { ok: boolean; reason: string; message: string } | undefined {
  const v = backups?.lastVerified;
  if (!v) return undefined;
  return v.result === 'Passed'
    ? { ok: true, reason: 'DrillPassed', message: `${v.time}: ${v.message}` }
    : { ok: false, reason: 'DrillFailed', message: `${v.time}: ${v.message}` };
}

/** One line for `local status` and `kubectl svc status`. */
export function describeVerified(v: VerifiedStatus): string {
  return `${v.result.toLowerCase()} at ${v.time} (revision ${v.revision}${v.location ? `, ${v.location}` : ''}): ${v.message}`;
}

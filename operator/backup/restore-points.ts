// The object layout of backups in a destination and what it offers as restore points, pure: keys, the manifest beside
// each full snapshot, which restore point a revision or a time picks (or why none), and which full snapshots
// retention removes. No I/O and no clock inside (destinations/ does the I/O; `now` comes in).
//
// Layout under a destination's prefix:   <prefix>/<cluster>/full/<revision, 20 digits>-<time>.db   the snapshot
//                                        <prefix>/<cluster>/full/<revision, 20 digits>-<time>.json its manifest
//                                        <prefix>/<cluster>/delta/delta-<from>-<to>.jsonl            a delta segment
// The revision leads the name, zero-padded, so a listing in key order is in revision order. The manifest is
// written after its snapshot: a snapshot without one is an upload that did not finish and is not a restore point.
import type { BackupKind } from '../api/types.js';
import { segmentFileName } from './delta.js';

/** What made a full snapshot: the engine's kinds, or the backup agent (a new base after compaction or a long absence). */
export type FullKind = BackupKind | 'continuous';

/** The manifest's format tag: a .json without it is not ours (a foreign object). */
export const MANIFEST_FORMAT = 'svc.dev/backup/v1';

/** What is recorded beside each full snapshot. */
export interface FullManifest {
  format: typeof MANIFEST_FORMAT;
  kind: 'full';
  cluster: string;
  /** The member it was streamed from (the leader). */
  member: string;
  /** The snapshot's revision. */
  revision: number;
  /** When it was taken (RFC 3339). */
  time: string;
  /** HashKV of the member at `revision` when it was taken (a restore proves itself against it). */
  hashKV?: number;
  /** The compaction revision that hash was computed over. */
  compactRevision?: number;
  /** sha256 of the database bytes (the snapshot file's trailing digest), hex. */
  sha256: string;
  /** Database bytes. */
  size: number;
  /** The svc release the member ran. */
  release: string;
  /** What made it. */
  backupKind: FullKind;
  /** The snapshot's key, relative to the cluster's folder (full/<...>.db). */
  snapshot: string;
}

/** A full snapshot a destination holds, with its keys. */
export interface RestorePoint extends FullManifest {
  /** Key of the snapshot object. */
  key: string;
  /** Key of the manifest object. */
  manifestKey: string;
}

/** The folder of `cluster`'s backups under `prefix`, ending in "/". */
export function clusterFolder(prefix: string | undefined, cluster: string): string {
  return `${prefix ? `${prefix}/` : ''}${cluster}/`;
}

/** Key of the full snapshot of `cluster` at `revision` taken at `time`. */
export function fullSnapshotKey(prefix: string | undefined, cluster: string, revision: number, time: string): string {
  return `${clusterFolder(prefix, cluster)}full/${String(revision).padStart(20, '0')}-${time.replace(/[:.]/g, '-')}.db`;
}

/** The manifest's key beside a snapshot's key. */
export function manifestKeyOf(snapshotKey: string): string {
  return snapshotKey.replace(/\.db$/, '.json');
}

/** The manifest of a snapshot uploaded to `key` (relative names inside the manifest). */
export function fullManifest(i: Omit<FullManifest, 'format' | 'kind' | 'snapshot'>, key: string): FullManifest {
  return { format: MANIFEST_FORMAT, kind: 'full', ...i, snapshot: key.slice(key.lastIndexOf('/full/') + 1) };
}

/** A manifest read from `key`: the restore point, or why it is not one (corrupt or foreign). */
export function parseManifest(text: string, key: string): RestorePoint | { problem: string } {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    return { problem: `${key} is not JSON (${(e as Error).message}): corrupt, or not written by svc-operator` };
  }
  if (typeof j !== 'object' || j === null || j.format !== MANIFEST_FORMAT) return { problem: `${key} is not an svc-operator manifest (no format "${MANIFEST_FORMAT}")` };
  const bad: string[] = ['cluster', 'member', 'time', 'sha256', 'release', 'snapshot'].filter((f) => typeof j[f] !== 'string');
  bad.push(...['revision', 'size'].filter((f) => typeof j[f] !== 'number' || !Number.isInteger(j[f])));
  if (j.kind !== 'full' || bad.length > 0 || Number.isNaN(Date.parse(String(j.time)))) return { problem: `${key} is a damaged manifest (${bad.length > 0 ? `missing or wrong: ${bad.join(', ')}` : 'kind or time wrong'})` };
  const m = j as unknown as FullManifest;
  const folder = key.slice(0, key.lastIndexOf('/full/') + 1);
  return { ...m, key: `${folder}${m.snapshot}`, manifestKey: key };
}

/** The revisions and times the points cover (oldest and newest), or undefined when there are none. */
export function coveredRange(points: readonly RestorePoint[]): { oldest: RestorePoint; newest: RestorePoint } | undefined {
  if (points.length === 0) return undefined;
  const sorted = [...points].sort(byRevision);
  return { oldest: sorted[0], newest: sorted[sorted.length - 1] };
}

/** The covered range as one phrase for messages. */
export function describeRange(points: readonly RestorePoint[]): string {
  const r = coveredRange(points);
  if (!r) return 'no restore points';
  return `restore points from revision ${r.oldest.revision} (${r.oldest.time}) to revision ${r.newest.revision} (${r.newest.time}), ${points.length} in all`;
}

function byRevision(a: RestorePoint, b: RestorePoint): number {
  return a.revision - b.revision || a.time.localeCompare(b.time);
}

/** Where to restore to: a revision, a time, or (neither) the newest point. */
export interface RestoreTarget {
  revision?: number;
  time?: string;
}

/**
 * The restore point a target picks: the newest full snapshot at or before the revision (or taken at or before the
 * time), or the newest of all; a target before every point is refused with the covered range.
 */
export function pickRestorePoint(points: readonly RestorePoint[], target: RestoreTarget, where: string): { point: RestorePoint } | { refused: string } {
  const sorted = [...points].sort(byRevision);
  if (sorted.length === 0) return { refused: `${where} holds no restore points (no full snapshot with its manifest); take a backup first (svc-operator local backup --wait)` };
  let fits = sorted;
  let asked = 'the newest restore point';
  if (target.revision !== undefined) {
    fits = sorted.filter((p) => p.revision <= target.revision!);
    asked = `revision ${target.revision}`;
  } else if (target.time !== undefined) {
    const t = Date.parse(target.time);
    fits = sorted.filter((p) => Date.parse(p.time) <= t);
    asked = `time ${target.time}`;
  }
  const point = fits.at(-1);
  if (!point) return { refused: `${where} does not cover ${asked}: it has ${describeRange(sorted)}; ask for a point in that range` };
  return { point };
}

/**
 * Which full snapshots retention removes: all but the newest `keep`, and of those the ones taken more than
 * `maxAgeMs` before `now`; the newest one always stays (a destination never loses its last restore point).
 */
export function retainFull(points: readonly RestorePoint[], keep: number, maxAgeMs: number | undefined, now: Date): { kept: RestorePoint[]; removed: RestorePoint[] } {
  const newestFirst = [...points].sort((a, b) => byRevision(b, a));
  const kept: RestorePoint[] = [];
  const removed: RestorePoint[] = [];
  newestFirst.forEach((p, i) => {
    const tooOld = maxAgeMs !== undefined && now.getTime() - Date.parse(p.time) > maxAgeMs;
    if (i === 0 || (i < keep && !tooOld)) kept.push(p);
    else removed.push(p);
  });
  return { kept: kept.reverse(), removed: removed.reverse() };
}

/** The cluster folders among keys listed under `prefix` (keys <prefix>/<cluster>/full/...). */
export function clustersIn(keys: readonly string[], prefix: string | undefined): string[] {
  const start = prefix ? `${prefix}/` : '';
  const out = new Set<string>();
  for (const k of keys) {
    if (!k.startsWith(start)) continue;
    const m = /^([^/]+)\/full\//.exec(k.slice(start.length));
    if (m) out.add(m[1]);
  }
  return [...out].sort();
}

/** A delta segment a destination holds, known by its key (its revisions are in its name). */
export interface SegmentRef {
  key: string;
  fromRevision: number;
  toRevision: number;
  /** When the agent saw its last revision: known once the segment was read (time targets need it). */
  lastTime?: string;
  /** When the agent saw each of its revisions committed (ms, from fromRevision): known once read, when the segment records them. */
  seen?: number[];
}

/** Key of a delta segment of `cluster` under `prefix`. */
export function deltaKey(prefix: string | undefined, cluster: string, s: { fromRevision: number; toRevision: number }): string {
  return `${clusterFolder(prefix, cluster)}delta/${segmentFileName(s)}`;
}

/** The segment a key names, or undefined (not a segment's name). */
export function parseDeltaKey(key: string): SegmentRef | undefined {
  const m = /\/delta\/delta-(\d{16})-(\d{16})\.jsonl$/.exec(key);
  if (!m) return undefined;
  const fromRevision = Number(m[1]);
  const toRevision = Number(m[2]);
  return fromRevision >= 1 && toRevision >= fromRevision ? { key, fromRevision, toRevision } : undefined;
}

/**
 * The segments that continue a full snapshot at `base` without a hole, in order (overlaps are fine: an agent
 * restarted after an upload it had not recorded), and the newest revision they reach (base itself without any).
 */
export function chainFrom(base: number, segments: readonly SegmentRef[]): { end: number; used: SegmentRef[] } {
  const sorted = [...segments].sort((a, b) => a.fromRevision - b.fromRevision || a.toRevision - b.toRevision);
  let end = base;
  const used: SegmentRef[] = [];
  for (const s of sorted) {
    if (s.toRevision <= end) continue;
    if (s.fromRevision > end + 1) break; // sorted by start: nothing later closes the hole
    used.push(s);
    end = s.toRevision;
  }
  return { end, used };
}

/** What a destination can restore: each full snapshot and the newest revision its delta chain reaches. */
export interface Coverage {
  point: RestorePoint;
  /** The newest revision restorable from the point (its own revision without segments). */
  end: number;
  /** When the agent saw `end` (the last segment's lastTime when read, else the point's time). */
  endTime?: string;
  segments: SegmentRef[];
}

export function deltaCoverage(points: readonly RestorePoint[], segments: readonly SegmentRef[]): Coverage[] {
  return [...points].sort(byRevision).map((point) => {
    const { end, used } = chainFrom(point.revision, segments);
    const last = used.at(-1);
    return { point, end, endTime: last ? last.lastTime : point.time, segments: used };
  });
}

/** The coverage that reaches the newest restorable revision (of equal ends, the newer point's): what a restore with no target gets. */
function newestOf(cov: readonly Coverage[]): Coverage | undefined {
  return cov.reduce<Coverage | undefined>((a, c) => (!a || c.end >= a.end ? c : a), undefined);
}

/** The oldest and newest restorable revision (and time) of a destination, or undefined without restore points. */
export function restorableRange(points: readonly RestorePoint[], segments: readonly SegmentRef[]): { oldest: { revision: number; time: string }; newest: { revision: number; time?: string } } | undefined {
  const cov = deltaCoverage(points, segments);
  const newest = newestOf(cov);
  if (!newest) return undefined;
  return { oldest: { revision: cov[0].point.revision, time: cov[0].point.time }, newest: { revision: newest.end, ...(newest.endTime ? { time: newest.endTime } : {}) } };
}

/** The covered revisions as one phrase for messages: each run a full snapshot and its segments reach. */
export function describeCoverage(points: readonly RestorePoint[], segments: readonly SegmentRef[]): string {
  const runs: Array<[number, number]> = [];
  for (const c of deltaCoverage(points, segments)) {
    const last = runs.at(-1);
    if (last && c.point.revision <= last[1]) last[1] = Math.max(last[1], c.end);
    else runs.push([c.point.revision, c.end]);
  }
  if (runs.length === 0) return 'no restore points';
  return `restorable revisions ${runs.map(([a, b]) => (a === b ? `${a}` : `${a}..${b}`)).join(', ')}`;
}

/** A restore: the full snapshot, the revision it is taken to, and the segments replayed on it (none: the snapshot alone). */
export interface RestorePlan {
  point: RestorePoint;
  revision: number;
  segments: SegmentRef[];
}

/**
 * The restore a target asks for with continuous backup: a revision is restored exactly (the newest full snapshot at
 * or before it whose segments reach it); a time gives every revision the agent had seen committed by then (its
 * segments read first: seenThrough); no target, the newest restorable revision. Without any segments, a full
 * snapshot is the finest point (pickRestorePoint). A point not covered is refused with the covered revisions.
 */
export function planRestore(points: readonly RestorePoint[], segments: readonly SegmentRef[], target: RestoreTarget, where: string): RestorePlan | { refused: string } {
  const picked = pickRestorePoint(points, target, where);
  if ('refused' in picked) return picked;
  if (segments.length === 0) return { point: picked.point, revision: picked.point.revision, segments: [] };
  const cov = deltaCoverage(points, segments);
  if (target.revision !== undefined) {
    const r = target.revision;
    const fit = [...cov].reverse().find((c) => c.point.revision <= r && c.end >= r);
    if (!fit) return { refused: `${where} does not cover revision ${r}: it has ${describeCoverage(points, segments)}; ask for a revision in one of those ranges` };
    return { point: fit.point, revision: r, segments: fit.segments.filter((s) => s.fromRevision <= r) };
  }
  if (target.time !== undefined) {
    const t = Date.parse(target.time);
    const c = cov.find((x) => x.point.key === picked.point.key)!;
    // every revision the agent had seen by then, up to the first it saw later (a later one seen earlier would be an
    // agent's clock jump): the segments up to there, the last one maybe in part
    const used: SegmentRef[] = [];
    let revision = c.point.revision;
    for (const s of c.segments) {
      const through = seenThrough(s, t);
      if (through > revision) {
        used.push(s);
        revision = through;
      }
      if (through < s.toRevision) break;
    }
    return { point: c.point, revision, segments: used };
  }
  const newest = newestOf(cov)!;
  return { point: newest.point, revision: newest.end, segments: newest.segments };
}

/**
 * The newest revision of a segment the agent had seen committed by `t` (ms), with every one before it in the
 * segment (fromRevision - 1: none): by each revision's time where the segment records them, else (an older agent's
 * segment) all or none by its lastTime; none while the segment was not read.
 */
export function seenThrough(s: SegmentRef, t: number): number {
  if (s.seen) {
    const n = s.seen.findIndex((x) => x > t);
    return n < 0 ? s.fromRevision + s.seen.length - 1 : s.fromRevision + n - 1;
  }
  return s.lastTime !== undefined && Date.parse(s.lastTime) <= t ? s.toRevision : s.fromRevision - 1;
}

/**
 * The segments retention removes once `kept` full snapshots remain: those that end at or before the oldest kept
 * one's revision (only removed, older snapshots needed them); any segment a kept point's chain may use stays.
 */
export function segmentsToRemove(kept: readonly RestorePoint[], segments: readonly SegmentRef[]): SegmentRef[] {
  if (kept.length === 0) return [];
  const oldest = Math.min(...kept.map((p) => p.revision));
  return segments.filter((s) => s.toRevision <= oldest);
}

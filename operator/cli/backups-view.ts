// The restore points of a cluster's object-store destinations, as `svc-operator local backups` and `kubectl svc
// backups` list and print them: per destination every full snapshot, the oldest and newest restorable revision and
// time (every delta segment read and checked: the range goes only as far as the intact ones reach, the first broken
// one named), what is there that is not a restore point (corrupt or foreign objects), or why it could not be listed.
// Listing is the caller's (its runtime's way to Secrets); gathering and printing are here, once.
import type { RestoreSpec, SvcClusterSpec } from '../api/types.js';
import { DestinationError, RestoreSourceError, s3Destinations, type BrokenSegment, type SourcePoints } from '../backup/destinations/index.js';
import { describeCoverage, describeRange, restorableRange, type RestorePoint } from '../backup/restore-points.js';
import { RuntimeError } from '../runtime/index.js';

/** One destination's restore points as the listing shows them. */
export interface DestinationListing {
  name: string;
  /** Whose backups. */
  cluster: string;
  where: string;
  oldest: { revision: number; time: string } | null;
  /** The newest restorable revision (a full snapshot's, or the end of its delta segments) and when it was seen. */
  newest: { revision: number; time?: string } | null;
  points: RestorePoint[];
  /**
   * Continuous backup's delta segments: how many (each was read and checked), the revisions restorable with the
   * intact ones, and the broken ones in revision order (the first is the one named).
   */
  deltas: { segments: number; coverage: string; broken: BrokenSegment[] } | null;
  /** Objects found that are not restore points (corrupt or foreign manifests). */
  problems: string[];
  /** Why the destination could not be listed (unreachable, credentials, bucket). */
  error: string | null;
}

/** Lists one source (a destination or spec.restore.source): its points, problems, label and whose backups. */
export type ListSource = (restore: RestoreSpec) => Promise<SourcePoints>;

/** What to list: each S3 destination of the spec (the cluster's own backups), and its spec.restore.source when asked. */
export function backupSources(cluster: string, spec: SvcClusterSpec, withRestoreSource: boolean): Array<{ name: string; restore: RestoreSpec }> {
  const sources = s3Destinations(spec).map((d) => ({ name: d.name, restore: { source: { destination: d.name, cluster } } as RestoreSpec }));
  if (withRestoreSource && spec.restore?.source?.s3) sources.push({ name: 'restore source', restore: { source: spec.restore.source } });
  return sources;
}

/** Lists every source; a destination that cannot be listed is a listing with its error (other errors throw). */
export async function listBackups(cluster: string, sources: ReadonlyArray<{ name: string; restore: RestoreSpec }>, list: ListSource): Promise<DestinationListing[]> {
  const out: DestinationListing[] = [];
  for (const d of sources) {
    const listing: DestinationListing = { name: d.name, cluster, where: d.name, oldest: null, newest: null, points: [], deltas: null, problems: [], error: null };
    try {
      const r = await list(d.restore);
      const range = restorableRange(r.points, r.segments);
      Object.assign(listing, { cluster: r.cluster, where: r.where, points: r.points, problems: r.problems });
      if (range) Object.assign(listing, range);
      if (r.segments.length + r.broken.length > 0) listing.deltas = { segments: r.segments.length + r.broken.length, coverage: describeCoverage(r.points, r.segments), broken: r.broken };
    } catch (e) {
      if (!(e instanceof DestinationError) && !(e instanceof RestoreSourceError) && !(e instanceof RuntimeError)) throw e;
      listing.error = (e as Error).message;
    }
    out.push(listing);
  }
  return out;
}

/**
 * The listings with each point's member by name where it was recorded as the host:port a backup agent snapshotted
 * from (agents before they recorded names), as `byHost` knows the members' client host:port; others as they are.
 */
export function namedMembers(listings: DestinationListing[], byHost: ReadonlyMap<string, string>): DestinationListing[] {
  return listings.map((l) => ({ ...l, points: l.points.map((p) => (byHost.has(p.member) ? { ...p, member: byHost.get(p.member)! } : p)) }));
}

/** Prints the listings (json: `{cluster, destinations}`; else a line per destination and a table of its points); `none` when there are none. */
export function printBackups(write: (s: string) => void, cluster: string, listings: readonly DestinationListing[], output: string | undefined, none: string): void {
  if (output === 'json') {
    write(`${JSON.stringify({ cluster, destinations: listings }, null, 2)}\n`);
    return;
  }
  if (listings.length === 0) write(`${none}\n`);
  for (const l of listings) {
    if (l.error) {
      write(`${l.error}\n`);
      continue;
    }
    write(`${l.where}, cluster ${l.cluster}: ${describeRange(l.points)}\n`);
    if (l.deltas && l.newest) {
      write(`continuous: ${l.deltas.segments} delta segment(s), each read and checked (sha256, revisions without a hole); ${l.deltas.coverage}; newest restorable revision ${l.newest.revision}${l.newest.time ? ` (${l.newest.time})` : ''}\n`);
      const first = l.deltas.broken[0];
      if (first) {
        const more = l.deltas.broken.length > 1 ? ` (${l.deltas.broken.length} broken in all)` : '';
        write(`BROKEN delta segment ${first.key}: ${first.problem}; its revisions ${first.fromRevision}..${first.toRevision} cannot be replayed from it: the restorable revisions above go only as far as the intact segments reach${more}; a new full snapshot (an on-demand backup) covers what comes after\n`);
      }
    }
    if (l.points.length > 0) {
      const rows = [['REVISION', 'TIME', 'KIND', 'MEMBER', 'RELEASE', 'BYTES', 'HASHKV', 'OBJECT'], ...l.points.map((p) => [String(p.revision), p.time, p.backupKind, p.member, p.release, String(p.size), p.hashKV === undefined ? '-' : String(p.hashKV), p.key])];
      const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      for (const r of rows) write(`${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(w[i]))).join('  ')}\n`);
    }
    for (const p of l.problems) write(`not a restore point: ${p}\n`);
  }
}

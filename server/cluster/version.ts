// Cluster version negotiation, as pure functions: the leader feeds in what every member reported and gets back
// what (if anything) to propose. The rule: the cluster version is the lowest major.minor among the members, and
// it only moves up by itself; moving down is a downgrade, which this negotiation never proposes.
import { compareMinor, minorOf } from '../releases.js';

export const INITIAL_CLUSTER_VERSION = '3.0';

export type VersionDecision =
  | { kind: 'none'; reason: string }
  | { kind: 'set'; version: string; initial: boolean };

/**
 * Decide the cluster version from the members' server versions (undefined = could not be fetched).
 * With no cluster version yet, an unreachable member gives the floor 3.0, as the reference does.
 */
export function decideClusterVersion(current: string | undefined, memberVersions: Array<string | undefined>): VersionDecision {
  const unknown = memberVersions.some((v) => v === undefined);
  if (unknown) {
    if (current === undefined) return { kind: 'set', version: INITIAL_CLUSTER_VERSION, initial: true };
    return { kind: 'none', reason: 'the version of a member could not be fetched' };
  }
  let lowest: string | undefined;
  for (const v of memberVersions as string[]) {
    const m = minorOf(v);
    if (lowest === undefined || compareMinor(m, lowest) < 0) lowest = m;
  }
  if (lowest === undefined) return { kind: 'none', reason: 'no members' };
  if (current === undefined) return { kind: 'set', version: lowest, initial: true };
  if (compareMinor(lowest, current) > 0) return { kind: 'set', version: lowest, initial: false };
  return { kind: 'none', reason: 'cluster version is current' };
}

/** Members whose release is newer than the local one (the leader warns about each). */
export function higherVersionedMembers(localVersion: string, members: Array<{ id: bigint; version: string | undefined }>): Array<{ id: bigint; version: string }> {
  const out: Array<{ id: bigint; version: string }> = [];
  for (const m of members) {
    if (m.version !== undefined && compareMinor(minorOf(m.version), minorOf(localVersion)) > 0) out.push({ id: m.id, version: m.version });
  }
  return out;
}

/** Refuse only the downgrade direction: what applying a (possibly historical) version entry may check. */
export function checkDowngrade(serverVersion: string, clusterVersion: string | undefined): { ok: true } | { ok: false; reason: string } {
  if (clusterVersion === undefined || clusterVersion === INITIAL_CLUSTER_VERSION) return { ok: true };
  const s = minorOf(serverVersion);
  if (compareMinor(s, clusterVersion) < 0) {
    return { ok: false, reason: `invalid downgrade; server version is lower than determined cluster version (server-version ${s}, determined-cluster-version ${clusterVersion})` };
  }
  return { ok: true };
}

/**
 * May a server of `serverVersion` run in a cluster whose current version is `clusterVersion`? Checked at start
 * against the newest version known (the db, the members), never against entries replayed from history.
 * Lower than the cluster: a downgrade after completion, refused. More than one minor above: a skipped release.
 */
export function checkServerAgainstCluster(serverVersion: string, clusterVersion: string | undefined): { ok: true } | { ok: false; reason: string } {
  if (clusterVersion === undefined || clusterVersion === INITIAL_CLUSTER_VERSION) return { ok: true };
  const s = minorOf(serverVersion);
  if (compareMinor(s, clusterVersion) < 0) {
    return { ok: false, reason: `invalid downgrade; server version is lower than determined cluster version (server-version ${s}, determined-cluster-version ${clusterVersion})` };
  }
  const [cm, cn] = clusterVersion.split('.').map(Number);
  const [sm, sn] = s.split('.').map(Number);
  if (sm === cm && sn > cn + 1) {
    return { ok: false, reason: `unsupported upgrade; server version ${s} is more than one minor release ahead of cluster version ${clusterVersion}: upgrade through ${cm}.${cn + 1} first` };
  }
  return { ok: true };
}

// Upgrade paths: from the release a cluster runs to the one its spec names, as hops the reference's upgrade guides
// allow. A minor line is reached only from the one before it, and only from that line's lowest accepted patch
// (upgrade_3_6: every 3.5 member on 3.5.32 or later; upgrade_3_7: every 3.6 member on 3.6.11 or later); a line passed
// through is entered at its newest patch. Both facts are rows of the server's release table.
import { releaseFor } from '../../server/releases.js';
import { compareVersions, isSupportedVersion, parseVersion, type Version } from '../api/versions.js';
import type { SvcClusterSpec } from '../api/types.js';
import type { ObservedCluster, ObservedMember } from './types.js';

const text = (v: Version) => `${v.major}.${v.minor}.${v.patch}`;

/**
 * The hops from `from` to `to`, the last being `to` (a single hop for a patch change, a rollback or a downgrade:
 * those are judged by the planner's own rules). E.g. 3.5.21 -> 3.7.3: [3.5.32, 3.6.16, 3.7.3].
 */
export function upgradePath(from: string, to: string): string[] {
  const f = parseVersion(from);
  const t = parseVersion(to);
  if (!f || !t || !isSupportedVersion(from) || !isSupportedVersion(to)) return [to];
  const hops: string[] = [];
  let cur = f;
  while (cur.major === t.major && cur.minor < t.minor) {
    const next = releaseFor(`${cur.major}.${cur.minor + 1}.0`);
    if (cur.patch < next.fromPreviousMinPatch) {
      cur = { ...cur, patch: next.fromPreviousMinPatch };
      hops.push(text(cur));
    }
    cur = cur.minor + 1 === t.minor ? t : { major: cur.major, minor: cur.minor + 1, patch: next.newestPatch };
    hops.push(text(cur));
  }
  if (hops.at(-1) !== to) hops.push(to);
  return hops;
}

/** The release the cluster's path starts from: the lowest any member runs (or is configured for). */
export function pathStart(o: ObservedCluster): string | undefined {
  return o.members.map((m: ObservedMember) => m.release ?? m.configuredVersion).sort(compareVersions)[0];
}

/** The hops still ahead of a cluster toward spec.version (the first is the one to pursue now). */
export function remainingHops(spec: SvcClusterSpec, o: ObservedCluster): string[] {
  const start = pathStart(o);
  return start === undefined ? [spec.version] : upgradePath(start, spec.version);
}

/** The spec as the current hop sees it: spec.version replaced by the hop being taken. */
export function hopSpec(spec: SvcClusterSpec, o: ObservedCluster): SvcClusterSpec {
  const hop = remainingHops(spec, o)[0];
  return hop === spec.version ? spec : { ...spec, version: hop };
}

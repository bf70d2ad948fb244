// Release numbers as the planner compares them. Minor lines are what the cluster version and the upgrade
// rules speak in; patches only matter for "is this member on the target release". The release lines themselves
// are the server's release table (server/releases.ts).
import { minorOf as serverMinorOf, releaseFor, SUPPORTED_RELEASES } from '../../server/releases.js';

/** A parsed "<major>.<minor>.<patch>". */
export interface Version {
  major: number;
  minor: number;
  patch: number;
}

const RE = /^(\d+)\.(\d+)\.(\d+)$/;

/** Parses "<major>.<minor>.<patch>"; undefined when malformed. */
export function parseVersion(v: string | undefined): Version | undefined {
  const m = v === undefined ? null : RE.exec(v);
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : undefined;
}

/** Minor lines the product ships (3.3, 3.4, 3.5): those of the server's release table. */
export const SUPPORTED_MINORS: readonly string[] = SUPPORTED_RELEASES.map((v) => serverMinorOf(v));

/** "3.4" of "3.4.34" (or of "3.4"); undefined when malformed. */
export function minorOf(v: string | undefined): string | undefined {
  const m = v === undefined ? null : /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(v);
  return m ? `${Number(m[1])}.${Number(m[2])}` : undefined;
}

/** Position of a minor line on the release line (3.3 -> 0 ...); -1 when unknown. */
export function minorIndex(v: string | undefined): number {
  return SUPPORTED_MINORS.indexOf(minorOf(v) ?? '');
}

/** Numeric order of two full versions. */
export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a);
  const y = parseVersion(b);
  if (!x || !y) return a < b ? -1 : a > b ? 1 : 0;
  return x.major - y.major || x.minor - y.minor || x.patch - y.patch;
}

/** True when the version is well formed and of a supported minor line: one the server's release table runs. */
export function isSupportedVersion(v: string): boolean {
  try {
    releaseFor(v);
    return true;
  } catch {
    return false;
  }
}

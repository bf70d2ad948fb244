// The downgrade job, as pure functions: the target a request names, the checks of VALIDATE and ENABLE, what the
// leader's monitors decide while a job is enabled (lower the cluster version; clear the job once every member runs
// the target) and which members a job admits. The job itself is cluster state, changed only through the log.
import { compareMinor, minorOf, type Release } from '../releases.js';

/** The job as the cluster keeps it (and the db's cluster/downgrade key holds it). */
export interface DowngradeInfo {
  enabled: boolean;
  /** "3.5.0" while enabled, "" otherwise. */
  targetVersion: string;
}

export const NO_DOWNGRADE: DowngradeInfo = { enabled: false, targetVersion: '' };

/** The db value, in the reference's JSON: {"target-version":"3.5.0","enabled":true}. */
export function encodeDowngradeInfo(d: DowngradeInfo): string {
  return JSON.stringify({ 'target-version': d.targetVersion, enabled: d.enabled });
}

export function decodeDowngradeInfo(s: string): DowngradeInfo {
  const j = JSON.parse(s) as { 'target-version'?: string; enabled?: boolean };
  return { enabled: !!j.enabled, targetVersion: j['target-version'] ?? '' };
}

const IDENTIFIER = /^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/;

/** A semantic version "X.Y.Z[-pre][+meta]" as the reference's semver parser reads it; undefined if it is not one. */
function semverMinor(v: string): string | undefined {
  const plus = v.indexOf('+');
  const meta = plus >= 0 ? v.slice(plus + 1) : '';
  const rest = plus >= 0 ? v.slice(0, plus) : v;
  const dash = rest.indexOf('-');
  const pre = dash >= 0 ? rest.slice(dash + 1) : '';
  const parts = (dash >= 0 ? rest.slice(0, dash) : rest).split('.');
  if (parts.length !== 3 || (pre !== '' && !IDENTIFIER.test(pre)) || (meta !== '' && !IDENTIFIER.test(meta))) return undefined;
  if (!parts.every((p) => /^[+-]?\d+$/.test(p))) return undefined;
  return `${Number(parts[0])}.${Number(parts[1])}`;
}

/** The minor a downgrade request names: "3.5", "3.5.0" and "3.5.7" all name 3.5; undefined: a wrong format. */
export function parseDowngradeTarget(v: string): string | undefined {
  return semverMinor(v) ?? semverMinor(`${v}.0`);
}

/** The one minor a cluster of `clusterVersion` may go down to. */
export function allowedDowngradeTarget(clusterVersion: string): string {
  const [major, minor] = clusterVersion.split('.').map(Number);
  return `${major}.${minor - 1}`;
}

export type DowngradeRefusal = 'wrong-format' | 'no-cluster-version' | 'invalid-target' | 'in-progress';

/** VALIDATE's checks (ENABLE runs them too), after the linearizable read: the target minor, or why not. */
export function validateDowngrade(target: string, clusterVersion: string | undefined, job: DowngradeInfo): { ok: true; target: string } | { ok: false; refusal: DowngradeRefusal } {
  const minor = parseDowngradeTarget(target);
  if (minor === undefined) return { ok: false, refusal: 'wrong-format' };
  if (clusterVersion === undefined) return { ok: false, refusal: 'no-cluster-version' };
  if (minor !== allowedDowngradeTarget(clusterVersion)) return { ok: false, refusal: 'invalid-target' };
  if (job.enabled) return { ok: false, refusal: 'in-progress' };
  return { ok: true, target: minor };
}

/** DowngradeResponse.version: the cluster version, "3.6.0" (3.5) or "3.6" (3.6+). */
export function downgradeResponseVersion(rules: Release['downgrade'], clusterVersion: string | undefined): string {
  const cv = clusterVersion ?? '';
  return rules.responseVersion === 'full' && cv !== '' ? `${cv}.0` : cv;
}

export type LowerDecision =
  | { kind: 'none' }
  | { kind: 'lower'; version: string }
  | { kind: 'refuse'; message: 'Cannot downgrade from cluster-version to downgrade-target' | 'Cannot downgrade from minimal-server-version to downgrade-target' };

/**
 * The leader's cluster version decision while a job is enabled: lower the cluster version to the target once it
 * is one minor below both the cluster version and the lowest member (an unknown member version: wait).
 */
export function lowerForDowngrade(clusterVersion: string, job: DowngradeInfo, memberVersions: Array<string | undefined>): LowerDecision {
  const target = minorOf(job.targetVersion);
  if (target === clusterVersion) return { kind: 'none' };
  if (memberVersions.length === 0 || memberVersions.some((v) => v === undefined)) return { kind: 'none' };
  if (target !== allowedDowngradeTarget(clusterVersion)) return { kind: 'refuse', message: 'Cannot downgrade from cluster-version to downgrade-target' };
  const lowest = (memberVersions as string[]).map(minorOf).reduce((a, b) => (compareMinor(a, b) <= 0 ? a : b));
  if (target !== allowedDowngradeTarget(lowest)) return { kind: 'refuse', message: 'Cannot downgrade from minimal-server-version to downgrade-target' };
  return { kind: 'lower', version: target };
}

/** The completion check: done when every member runs the target minor; else the first that does not (undefined: unreachable). */
export function downgradeFinished(job: DowngradeInfo, memberVersions: Array<string | undefined>): { done: true } | { done: false; index: number } {
  const target = minorOf(job.targetVersion);
  const index = memberVersions.findIndex((v) => v === undefined || minorOf(v) !== target);
  return index < 0 ? { done: true } : { done: false, index };
}

/**
 * Which members an enabled job lets start, before the cluster version is compared: 3.5 admits exactly a member of
 * the target minor and refuses any other; 3.6+ leave it to the cluster version (undefined: compare it).
 */
export function admitDuringDowngrade(rules: Release['downgrade'], serverVersion: string, job: DowngradeInfo): { ok: true } | { ok: false; reason: string } | undefined {
  if (rules.admits !== 'target' || !job.enabled || job.targetVersion === '') return undefined;
  if (minorOf(serverVersion) === minorOf(job.targetVersion)) return { ok: true };
  return { ok: false, reason: `invalid downgrade; server version is not allowed to join when downgrade is enabled (current-server-version ${serverVersion}, target-cluster-version ${job.targetVersion})` };
}

/**
 * A member joining without data while the running cluster has a downgrade enabled accepts only a cluster version one
 * minor above its own (the reference's window; so a lower member joins before the leader lowers the version, not after).
 */
export function checkJoinDuringDowngrade(serverVersion: string, remoteClusterVersion: string): { ok: true } | { ok: false; reason: string } {
  const [major, minor] = minorOf(serverVersion).split('.').map(Number);
  const allowed = `${major}.${minor + 1}`;
  if (remoteClusterVersion === allowed) return { ok: true };
  const side = compareMinor(remoteClusterVersion, allowed) < 0 ? 'too low' : 'too high';
  return { ok: false, reason: `incompatible with current running cluster: cluster version of remote member is not compatible; ${side} (remote cluster version ${remoteClusterVersion}; while a downgrade is enabled a ${minorOf(serverVersion)} member joins only a cluster at ${allowed}). Nothing was written; join after the downgrade finished or was cancelled` };
}

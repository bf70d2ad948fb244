// The version monitor: compares this member's version with the other members'; the leader proposes a new
// cluster version when the lowest one moved (as the reference's monitorVersions), or the target of an enabled
// downgrade, and clears the downgrade job once every member runs the target (monitorDowngrade).
import { idHex } from '../cluster/ids.js';
import type { Member } from '../cluster/membership.js';
import { decideClusterVersion, higherVersionedMembers } from '../cluster/version.js';
import { downgradeFinished, lowerForDowngrade, type DowngradeInfo } from '../cluster/downgrade.js';
import { compareMinor, minorOf } from '../releases.js';
import type { Logger } from '../log/logger.js';
import type { Lifecycle } from './lifecycle.js';

export interface VersionMonitorDeps {
  memberId: bigint;
  /** This member's release version ("3.4.23"). */
  localVersion: string;
  logger: Logger;
  lifecycle: Lifecycle;
  members(): Member[];
  isLeader(): boolean;
  /** The applied cluster version ("3.4"), undefined before the first decision. */
  clusterVersion(): string | undefined;
  /** A member's server version, asked over its peer URLs (undefined: unreachable). */
  fetchVersion(m: Member): Promise<string | undefined>;
  /** The API the update log lines name (3.5: "using v2 API", 3.6: "using v3 API"; earlier: none). */
  api: '' | 'v2' | 'v3';
  /** Propose the cluster version through the log; resolves once it applied. */
  proposeClusterVersion(version: string): Promise<void>;
  /** The applied downgrade job. */
  downgrade(): DowngradeInfo;
  /** Propose the end of the downgrade job; resolves once it applied. */
  cancelDowngrade(): Promise<void>;
  /** Every member, each round: bring the storage version to the cluster version (3.6+). */
  updateStorageVersion?(): void;
}

/** The cluster version the leader should set, given the members' versions; undefined: leave it. */
export function clusterVersionToSet(current: string | undefined, versions: Array<string | undefined>): { version: string; initial: boolean } | undefined {
  const d = decideClusterVersion(current, versions);
  if (d.kind !== 'set') return undefined;
  // Only upward here: lowering the cluster version is a downgrade, which this monitor never starts.
  if (current !== undefined && compareMinor(d.version, current) <= 0) return undefined;
  return { version: d.version, initial: d.initial };
}

export class VersionMonitor {
  private running = false;
  private readonly versions = new Map<bigint, string | undefined>();

  constructor(private readonly d: VersionMonitorDeps) {}

  /** The versions last fetched from the members (for the warnings and /metrics). */
  memberVersions(): Map<bigint, string | undefined> {
    return this.versions;
  }

  /** One round: fetch, warn about higher versions, and (the leader) move the cluster version up. */
  async check(): Promise<void> {
    const { d } = this;
    if (d.lifecycle.stopped || d.lifecycle.stopping || this.running) return;
    this.running = true;
    try {
      d.updateStorageVersion?.();
      const members = d.members();
      const versions = await this.fetchVersions(members);
      members.forEach((m, i) => this.versions.set(m.id, versions[i]));
      const local = d.localVersion;
      const higher = higherVersionedMembers(local, members.map((m, i) => ({ id: m.id, version: versions[i] })));
      if (higher.length > 0) {
        const lv = local.split('.').slice(0, 2).join('.');
        d.logger.warn(`the local svc version ${lv} is not up-to-date`, { 'local-member-version': lv });
        for (const h of higher) {
          d.logger.warn(`member ${idHex(h.id)} has a higher version ${h.version}`, { 'remote-member-id': idHex(h.id), 'remote-member-version': h.version });
          if (d.isLeader()) d.logger.warn('leader found higher-versioned member', { 'local-member-version': lv, 'remote-member-id': idHex(h.id), 'remote-member-version': h.version });
        }
      }
      if (!d.isLeader() || members.length === 0) return;
      const current = d.clusterVersion();
      const job = d.downgrade();
      if (job.enabled && current !== undefined) {
        await this.lower(current, job, versions);
        return;
      }
      const next = clusterVersionToSet(current, versions);
      if (!next) return;
      const using = d.api === '' ? '' : ` using ${d.api} API`;
      if (next.initial) d.logger.info(`setting up initial cluster version${using}`, { 'cluster-version': next.version });
      else d.logger.info(`updating cluster version${using}`, { from: current, to: next.version });
      await d.proposeClusterVersion(next.version);
      d.logger.info('cluster version is updated', { 'cluster-version': next.version });
    } catch (e) {
      if (!d.lifecycle.stopped && !d.lifecycle.stopping) d.logger.warn('failed to update cluster version', { error: (e as Error).message });
    } finally {
      this.running = false;
    }
  }

  private fetchVersions(members: Member[]): Promise<Array<string | undefined>> {
    return Promise.all(members.map(async (m) => (m.id === this.d.memberId ? this.d.localVersion : this.d.fetchVersion(m))));
  }

  /** An enabled downgrade: the cluster version goes to the target once every member can follow it there. */
  private async lower(current: string, job: DowngradeInfo, versions: Array<string | undefined>): Promise<void> {
    const { d } = this;
    const next = lowerForDowngrade(current, job, versions);
    if (next.kind === 'refuse') d.logger.error(next.message, { 'downgrade-target': job.targetVersion, 'cluster-version': `${current}.0` });
    if (next.kind !== 'lower') return;
    d.logger.info('updating cluster version', { from: current, to: next.version });
    await d.proposeClusterVersion(next.version);
    d.logger.info('cluster version is updated', { 'cluster-version': next.version });
  }

  /** The leader, every --downgrade-check-time: once every member runs the target, the downgrade is over. */
  async checkDowngrade(): Promise<void> {
    const { d } = this;
    if (d.lifecycle.stopped || d.lifecycle.stopping || !d.isLeader()) return;
    const job = d.downgrade();
    if (!job.enabled) return;
    const members = d.members();
    const versions = await this.fetchVersions(members);
    const done = downgradeFinished(job, versions);
    if (!done.done) {
      const v = versions[done.index];
      if (v !== undefined) d.logger.warn('remotes server has mismatching etcd version', { 'remote-member-id': idHex(members[done.index].id), 'current-server-version': `${minorOf(v)}.0`, 'target-version': job.targetVersion });
      return;
    }
    d.logger.info('the cluster has been downgraded', { 'cluster-version': job.targetVersion });
    await d.cancelDowngrade().catch((e: unknown) => d.logger.warn('failed to cancel downgrade', { error: (e as Error).message }));
  }
}

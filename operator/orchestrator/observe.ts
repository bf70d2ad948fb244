// One observation of a cluster: the runtime's view of its members plus what each member answers
// (/version, /health, /metrics, Maintenance.Status), taken in parallel with per-call timeouts.
import type { MemberApi as MemberClient } from './member-api.js';
import { can, type Runtime, type RuntimeMember } from '../runtime/runtime.js';
import type { ClusterMember, CorruptionObservation, ObservedCluster, ObservedMember } from '../planner/types.js';

/** An observation plus the client URL of each member (the planner needs names only; executing needs URLs). */
export interface Observation {
  cluster: ObservedCluster;
  urls: Map<string, string>;
}

async function observeMember(client: MemberClient, rm: RuntimeMember): Promise<ObservedMember> {
  const base: ObservedMember = { name: rm.name, configuredVersion: rm.configuredVersion, running: rm.running, failure: rm.failure, healthy: false, leader: false };
  if (rm.configRevision !== undefined) base.configRevision = rm.configRevision;
  if (rm.tlsRevision !== undefined) base.tlsRevision = rm.tlsRevision;
  if (rm.restartToken !== undefined) base.restartToken = rm.restartToken;
  if (rm.lost !== undefined) base.lost = rm.lost;
  if (rm.dataLost !== undefined) base.dataLost = rm.dataLost;
  if (rm.forcedNewCluster !== undefined) base.forcedNewCluster = rm.forcedNewCluster;
  if (!rm.running) return base;
  const [version, healthy, leader, status] = await Promise.all([
    client.version(rm.clientURL).catch(() => undefined),
    client.healthy(rm.clientURL),
    client.isLeader(rm.clientURL).catch(() => false),
    client.status(rm.clientURL).catch(() => undefined),
  ]);
  return {
    ...base,
    id: status?.id,
    release: version?.etcdserver,
    clusterVersion: version?.etcdcluster,
    healthy,
    leader,
    appliedIndex: status?.appliedIndex,
    ...(status ? { revision: status.revision, dbSize: status.dbSize } : {}),
    ...(status?.dbSizeInUse !== undefined ? { dbSizeInUse: status.dbSizeInUse } : {}),
  };
}

/**
 * The catch-up reading, with one leader: the leader's applied index is read again, THEN every follower's (their
 * values replace the first round's), so each follower is compared with a leader index read before its own; the
 * two readings of the leader give the write rate.
 */
async function catchUpReading(client: MemberClient, members: ObservedMember[], urls: Map<string, string>, firstAt: number, clock: () => number): Promise<ObservedCluster['catchUp']> {
  const leaders = members.filter((m) => m.leader);
  if (leaders.length !== 1 || leaders[0].appliedIndex === undefined) return undefined;
  const leader = leaders[0];
  const before = leader.appliedIndex!;
  const st = await client.status(urls.get(leader.name)!).catch(() => undefined);
  const at = clock();
  if (!st) return undefined;
  leader.appliedIndex = st.appliedIndex;
  await Promise.all(members.filter((m) => m !== leader && m.running).map(async (m) => {
    m.appliedIndex = (await client.status(urls.get(m.name)!).catch(() => undefined))?.appliedIndex;
  }));
  const seconds = Math.max(0.001, (at - firstAt) / 1000);
  return { leaderIndex: st.appliedIndex, ratePerSecond: Math.max(0, Math.round((st.appliedIndex - before) / seconds)) };
}

/** Observes the cluster now (`clock`: for tests). */
export async function observe(runtime: Runtime, client: MemberClient, clock: () => number = Date.now): Promise<Observation> {
  const rms = await runtime.members();
  const firstAt = clock();
  const members = await Promise.all(rms.map((rm) => observeMember(client, rm)));
  const urls = new Map(rms.map((m) => [m.name, m.clientURL]));
  const catchUp = await catchUpReading(client, members, urls, firstAt, clock);
  let authEnabled: boolean | undefined;
  for (const m of members.filter((x) => x.healthy)) {
    try {
      authEnabled = await client.authEnabled(urls.get(m.name)!);
      break;
    } catch {
      // try the next member
    }
  }
  const leader = members.find((m) => m.leader);
  const v2DataBytes = leader ? await runtime.v2DataBytes(leader.name) : undefined;
  // The member list: the leader's; without a leader (a 1 -> 2 step before the second member starts has no
  // quorum), any running member's own view, flagged as such.
  let clusterMembers: ClusterMember[] | undefined;
  let byLeader = false;
  if (leader) {
    clusterMembers = await memberList(runtime, client, urls.get(leader.name)!, true);
    byLeader = clusterMembers !== undefined;
  }
  for (const m of members.filter((x) => x.running)) {
    if (clusterMembers) break;
    clusterMembers = await memberList(runtime, client, urls.get(m.name)!, false);
  }
  const list = clusterMembers ? { clusterMembers, clusterMembersByLeader: byLeader } : {};
  const revision = await runtime.targetRevision?.();
  const volume = can(runtime, 'volumes') ? await runtime.volumes() : undefined;
  const agent = can(runtime, 'continuous') ? await runtime.agent() : undefined;
  // a raised alarm makes every member's /health fail: a cluster with a healthy member has none to read
  const alarms = leader && client.alarms && !members.some((m) => m.healthy) ? await client.alarms(urls.get(leader.name)!).catch(() => undefined) : undefined;
  const corruption = leader && alarms ? await observeCorruption(client, members, urls, alarms) : undefined;
  const noSpace = !corruption ? await observeNoSpace(client, members, urls, alarms) : undefined;
  return { cluster: { now: clock(), capabilities: runtime.capabilities, members, authEnabled, v2DataBytes, ...list, ...(revision ? { revision } : {}), ...(catchUp ? { catchUp } : {}), ...(corruption ? { corruption } : {}), ...(noSpace ? { noSpace } : {}), ...(alarms?.length ? { alarms } : {}), ...(volume ? { volume } : {}), ...(agent ? { agent } : {}) }, urls };
}

/**
 * With the NOSPACE alarm raised: the member IDs it is raised for, and health read without it (the alarm fails
 * every /health, which would hold up the relief that disarms it: planner/maintenance.ts).
 */
async function observeNoSpace(client: MemberClient, members: ObservedMember[], urls: Map<string, string>, alarms: Array<{ memberId: string; alarm: string }> | undefined): Promise<string[] | undefined> {
  const ids = (alarms ?? []).filter((a) => a.alarm === 'NOSPACE').map((a) => a.memberId);
  if (ids.length === 0) return undefined;
  await Promise.all(members.filter((m) => m.running).map(async (m) => {
    m.healthy = await client.healthy(urls.get(m.name)!, ['NOSPACE']);
  }));
  return [...new Set(ids)].sort();
}

/** The hash a strict majority of `size` members share (at the same compaction revision), if any. */
export function majorityHash(hashes: CorruptionObservation['hashes'], size: number): number | undefined {
  const counts = new Map<string, { hash: number; n: number }>();
  for (const h of Object.values(hashes)) {
    const key = `${h.hash}/${h.compactRevision}`;
    counts.set(key, { hash: h.hash, n: (counts.get(key)?.n ?? 0) + 1 });
  }
  return [...counts.values()].find((c) => c.n * 2 > size)?.hash;
}

/**
 * With the CORRUPT alarm raised (the leader's list): every running member's KV hash at the lowest revision among
 * them (writes are refused under the alarm, so it stands still); members whose hash differs from a strict majority's
 * are lost (DataCorrupt), and health is read without the alarm, which makes every member unhealthy and would hold
 * their replacement up. The planner does nothing else while the alarm is raised (healing.ts corruptionStep).
 */
async function observeCorruption(client: MemberClient, members: ObservedMember[], urls: Map<string, string>, alarms: Array<{ memberId: string; alarm: string }>): Promise<CorruptionObservation | undefined> {
  if (!client.hashKV) return undefined;
  const alarm = alarms.find((a) => a.alarm === 'CORRUPT');
  if (!alarm) return undefined;
  const running = members.filter((m) => m.running && m.revision !== undefined);
  const revision = Math.min(...running.map((m) => m.revision!));
  const hashes: CorruptionObservation['hashes'] = {};
  await Promise.all(running.map(async (m) => {
    const h = await client.hashKV!(urls.get(m.name)!, revision).catch(() => undefined);
    if (h) hashes[m.name] = h;
  }));
  await Promise.all(members.filter((m) => m.running).map(async (m) => {
    m.healthy = await client.healthy(urls.get(m.name)!, ['CORRUPT']);
  }));
  const majority = majorityHash(hashes, members.length);
  if (majority !== undefined) {
    const agree = Object.values(hashes).filter((h) => h.hash === majority).length;
    for (const m of members) {
      const h = hashes[m.name];
      if (h && h.hash !== majority && !m.lost) m.lost = { cause: 'DataCorrupt', detail: `the CORRUPT alarm is raised and its KV hash at revision ${revision} is ${h.hash}, where ${agree} of ${members.length} members have ${majority}` };
    }
  }
  return { alarmMemberId: alarm.memberId, revision, hashes, ...(majority !== undefined ? { majority } : {}) };
}

/** A member list, each entry tied to a runtime member (by name, else by peer URL); undefined when unreadable or the runtime cannot scale. */
async function memberList(runtime: Runtime, client: MemberClient, url: string, linearizable: boolean): Promise<ClusterMember[] | undefined> {
  if (!can(runtime, 'scaling')) return undefined;
  try {
    const list = await client.memberList(url, linearizable);
    return list.map((m) => {
      const member = m.name !== '' ? m.name : m.peerURLs.map((u) => runtime.memberOfPeerURL(u)).find((n) => n !== undefined);
      return { id: m.id, started: m.name !== '', ...(m.isLearner ? { isLearner: true } : {}), ...(member !== undefined ? { member } : {}) };
    });
  } catch {
    return undefined;
  }
}

// One observation of a cluster: the runtime's view of its members plus what each member answers
// (/version, /health, /metrics, Maintenance.Status), taken in parallel with per-call timeouts.
import type { MemberClient } from '../members/index.js';
import type { Runtime, RuntimeMember } from '../runtime/runtime.js';
import type { ObservedCluster, ObservedMember } from '../upgrade/types.js';

/** An observation plus the client URL of each member (the planner needs names only; executing needs URLs). */
export interface Observation {
  cluster: ObservedCluster;
  urls: Map<string, string>;
}

async function observeMember(client: MemberClient, rm: RuntimeMember): Promise<ObservedMember> {
  const base: ObservedMember = { name: rm.name, configuredVersion: rm.configuredVersion, running: rm.running, failure: rm.failure, healthy: false, leader: false };
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
  };
}

/** Observes the cluster now. */
export async function observe(runtime: Runtime, client: MemberClient): Promise<Observation> {
  const rms = await runtime.members();
  const members = await Promise.all(rms.map((rm) => observeMember(client, rm)));
  const urls = new Map(rms.map((m) => [m.name, m.clientURL]));
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
  return { cluster: { now: Date.now(), members, authEnabled, v2DataBytes }, urls };
}

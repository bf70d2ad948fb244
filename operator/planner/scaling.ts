// The scaling half of the planner (pure): spec.replicas against the runtime's members and the cluster's member
// list, one member at a time.
//
// - Scale up: addMember for the next ordinal (the lowest one no member has) (MemberAdd on the leader, then the runtime starts it joining the
//   members before it plus itself). The next add is planned only once every member (the new one included) is
//   running, healthy and caught up with the leader: the planner's usual gate.
// - Scale down: the highest ordinal goes; when it leads, moveLeader first; then removeMember (MemberRemove, then
//   the runtime stops it and drops its data, so a later member of that ordinal starts empty).
// - Only once no upgrade is under way (an upgrade in progress finishes first) and never without a healthy
//   cluster with one leader.
// - Resume by observation, before every other decision: a member in the cluster's list that the runtime does
//   not run (an operator crash between MemberAdd and the start) is started, never added twice; a runtime member
//   missing from the list (a crash between MemberRemove and the stop) is retired. Both finish a step already
//   begun, and neither can cost quorum (starting a registered voter only adds one; the retired one is no voter),
//   so they do not wait for the health gate (a 1 -> 2 step has no quorum until its second member starts).
import type { SvcClusterSpec } from '../api/types.js';
import { hexMemberId } from '../api/member-id.js';
import type { ObservedCluster, ObservedMember, Step } from './types.js';

/** Ordinal of a member name "<cluster>-<k>" (its trailing digits); -1 without. */
export function ordinalOf(name: string): number {
  const m = /(\d+)$/.exec(name);
  return m ? Number(m[1]) : -1;
}

/** Members in ordinal order (the planner's name order would put 10 before 2). */
export function byOrdinal<T extends { name: string }>(ms: readonly T[]): T[] {
  return [...ms].sort((a, b) => ordinalOf(a.name) - ordinalOf(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Name of the member to add next: the lowest ordinal no member has (after a recovery from a member other than the first, a lower one is free). */
function nextName(members: readonly ObservedMember[]): string {
  const used = new Set(members.map((m) => ordinalOf(m.name)));
  let k = 0;
  while (used.has(k)) k++;
  return `${members[0].name.replace(/\d+$/, '')}${k}`;
}

function wait(code: Extract<Step, { kind: 'wait' }>['code'], reason: string): Step {
  return { kind: 'wait', code, reason };
}

/** The step that finishes a scaling step begun before, or undefined when runtime and member list agree. */
export function resumeScaling(o: ObservedCluster): Step | undefined {
  const cm = o.clusterMembers;
  if (!cm || cm.length === 0 || o.members.length === 0) return undefined;
  const members = byOrdinal(o.members);
  const names = new Set(members.map((m) => m.name));
  const foreign = cm.filter((c) => c.member === undefined || !names.has(c.member));
  if (foreign.length > 0) {
    const next = nextName(members);
    if (foreign.length === 1 && foreign[0].member === next && !foreign[0].started) {
      return { kind: 'startMember', member: next, join: [...members.map((m) => m.name), next] };
    }
    const what = foreign.map((c) => `${c.member ?? 'unknown'} (id ${hexMemberId(c.id)}${c.started ? '' : ', never started'})`).join(', ');
    return wait('UnknownClusterMember', `the cluster's member list has member(s) the operator does not run: ${what}; remove them with "member remove" to go on`);
  }
  const listed = new Set(cm.map((c) => c.member));
  const gone = members.filter((m) => !listed.has(m.name));
  if (gone.length === 0) return undefined;
  const last = members[members.length - 1];
  if (gone.length === 1 && gone[0] === last && members.length > 1 && o.clusterMembersByLeader === true) return { kind: 'retireMember', member: last.name };
  return wait('MemberNotInCluster', `member(s) ${gone.map((m) => m.name).join(', ')} run but are not in the cluster's member list; only the highest ordinal is retired automatically`);
}

/**
 * The next scaling step of a healthy cluster with one leader, every member caught up and no upgrade under way
 * (the caller checked all that); undefined when the size is right.
 */
export function scaleStep(spec: SvcClusterSpec, o: ObservedCluster, leader: ObservedMember): Step | undefined {
  const members = byOrdinal(o.members);
  const have = members.length;
  const want = spec.replicas;
  if (have === want) return undefined;
  if (!o.clusterMembers || o.clusterMembersByLeader !== true) return wait('MemberListUnknown', `scaling from ${have} to ${want} members needs the cluster's member list; the leader did not give it`);
  if (have < want) {
    const next = nextName(members);
    return { kind: 'addMember', member: next, join: [...members.map((m) => m.name), next] };
  }
  const last = members[have - 1];
  if (last.name === leader.name) {
    const to = members.filter((m) => m !== last).sort((a, b) => (b.appliedIndex ?? 0) - (a.appliedIndex ?? 0) || ordinalOf(a.name) - ordinalOf(b.name))[0];
    return { kind: 'moveLeader', from: last.name, to: to.name, toId: to.id };
  }
  const id = o.clusterMembers.find((c) => c.member === last.name)?.id ?? last.id;
  if (id === undefined) return wait('MemberListUnknown', `member ${last.name} has no known id`);
  return { kind: 'removeMember', member: last.name, id };
}

/** A scale request that waits for the upgrade under way: the upgrade's wait, retyped. */
export function scaleAfterUpgrade(spec: SvcClusterSpec, o: ObservedCluster, upgradeStep: Step): Step {
  if (upgradeStep.kind !== 'wait' || o.members.length === spec.replicas || o.members.length === 0) return upgradeStep;
  return wait('ScaleAfterUpgrade', `scaling from ${o.members.length} to ${spec.replicas} members waits for the upgrade under way (${upgradeStep.code}: ${upgradeStep.reason})`);
}

// Carrying out the planner's scaling steps through a runtime that can scale and the member client. The
// membership change goes through the leader; the member list is read once more right before it, so a step
// planned on an older observation never adds or removes a member twice.
import type { MemberApi as MemberClient } from './member-api.js';
import { can, RuntimeError, type Runtime } from '../runtime/runtime.js';
import type { ScalingStep } from '../planner/steps.js';
import type { ObservedCluster } from '../planner/types.js';

export function leaderURL(o: ObservedCluster, urls: Map<string, string>, what: string): string {
  const leader = o.members.find((m) => m.leader);
  const url = leader && urls.get(leader.name);
  if (!url) throw new RuntimeError('NO_MEMBER', `no leader to ${what} through`);
  return url;
}

/** Carries out one scaling step. */
export async function executeScaling(rt: Runtime, client: MemberClient, step: ScalingStep, urls: Map<string, string>, o: ObservedCluster): Promise<void> {
  if (!can(rt, 'scaling')) throw new RuntimeError('UNSUPPORTED', `the ${rt.kind} runtime cannot add or remove members`);
  switch (step.kind) {
    case 'addMember': {
      const url = leaderURL(o, urls, `add ${step.member}`);
      const peer = await rt.peerURL(step.member);
      const list = await client.memberList(url);
      // as a learner: it counts in no quorum until it is promoted, caught up (the planner's promoteMember)
      if (!list.some((m) => m.peerURLs.includes(peer))) await client.memberAdd(url, peer, { isLearner: true });
      await rt.startMember(step.member, step.join);
      return;
    }
    case 'startMember':
      await rt.startMember(step.member, step.join);
      return;
    case 'removeMember': {
      const url = leaderURL(o, urls, `remove ${step.member}`);
      const list = await client.memberList(url);
      if (list.some((m) => m.id === step.id)) await client.memberRemove(url, step.id);
      await rt.retireMember(step.member);
      return;
    }
    case 'retireMember':
      await rt.retireMember(step.member);
      return;
  }
}

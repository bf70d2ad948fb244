// Carrying out the planner's healing steps (planner/healing.ts) through a runtime that can scale and heal, and the
// member client. replaceMember is resumable part by part: the member list is read first, and each part runs only
// while it is not yet done (the old ID listed: MemberRemove; no successor listed: a fresh data dir and MemberAdd as a
// learner; then the start, which is idempotent). A successor once listed is never wiped again.
import type { MemberApi as MemberClient } from './member-api.js';
import { can, RuntimeError, type Runtime } from '../runtime/runtime.js';
import type { ObservedCluster, Step } from '../planner/types.js';
import { leaderURL } from './scale.js';

export type HealingStep = Extract<Step, { kind: 'replaceMember' | 'promoteMember' }>;

/** Carries out one healing step. */
export async function executeHealing(rt: Runtime, client: MemberClient, step: HealingStep, urls: Map<string, string>, o: ObservedCluster): Promise<void> {
  const url = leaderURL(o, urls, `${step.kind} ${step.member}`);
  if (step.kind === 'promoteMember') {
    await client.memberPromote(url, step.id);
    return;
  }
  if (!can(rt, 'scaling') || !can(rt, 'healing')) throw new RuntimeError('UNSUPPORTED', `the ${rt.kind} runtime cannot replace members`);
  const peer = await rt.peerURL(step.member);
  let list = await client.memberList(url);
  if (list.some((m) => m.id === step.id)) {
    await client.memberRemove(url, step.id);
    list = await client.memberList(url);
  }
  if (!list.some((m) => m.peerURLs.includes(peer))) {
    await rt.resetMember(step.member, step.join);
    await client.memberAdd(url, peer, { isLearner: true });
  }
  await rt.startReplacement(step.member, step.join);
}

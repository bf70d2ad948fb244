// Quorum-loss recovery, pure: asked for (`svc-operator local recover`, `kubectl svc recover`: a request token in
// the local state file or the svc.dev/recover annotation), never automatic.
//
// - Refused (recoveryRefusal) while the cluster has quorum (a healthy member leads), when no member answers, and
//   when a member that does not answer still has its data (local: its data dir is there): its applied index cannot
//   be compared, so the survivor could be the wrong one. The CLIs refuse before writing a request; the planner
//   never acts on a refused request.
// - The survivor is the member with the highest applied index among those answering Maintenance.Status (served by
//   each member on its own, without quorum; ties go to the lower name). Every other member loses its data and
//   joins again empty, copying the survivor's: what it applied beyond the survivor's index is lost (nothing, when
//   it answered: the survivor has the highest; unknown when it does not answer).
// - Steps (each recorded first in RecoveryProgress, resumed by observation):
//   recoverSnapshot (a verified snapshot of the survivor, before anything is touched) ->
//   forceNewCluster (the others stopped and their data dropped; the survivor restarted in place with
//   --force-new-cluster: same name, URLs); done when the member list has the survivor and none of the old
//   members' ids (never forced again once a later step is recorded) ->
//   retireMember for lost members the runtime still runs (Kubernetes: the StatefulSet's pods), from the top
//   ordinal down (on Kubernetes a lost member below the survivor's ordinal cannot be dropped alone: the recovery
//   waits, MemberNotInCluster, the cluster serving without it) ->
//   endForceNewCluster (the survivor restarted without the flag: left on, a restart would remove the members added
//   after it) -> the planner's scale-up back to spec.replicas (addMember, lowest free ordinal first, so the lost
//   members come back under their names and URLs) -> recoverComplete.
import type { ObservedCluster, ObservedMember, RecoveryMemberReport, RecoveryProgress, Step } from './types.js';
import { byOrdinal } from './scaling.js';
import { hexMemberId } from '../api/member-id.js';

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** A member that answers Maintenance.Status (its applied index is known). */
const answers = (m: ObservedMember): boolean => m.running && m.appliedIndex !== undefined;

/** The healthy leader, when the cluster has quorum. */
export function quorumLeader(o: ObservedCluster): ObservedMember | undefined {
  return o.members.find((m) => m.leader && m.healthy);
}

/** The plan a recovery of `o` would follow: the survivor and what each member loses. */
export interface RecoveryPlan {
  survivor: ObservedMember;
  report: RecoveryMemberReport[];
}

/** Why a recovery of `o` is refused (cause and way out), or undefined. */
export function recoveryRefusal(o: ObservedCluster, name: string): string | undefined {
  if (o.members.length === 0) return `there is no cluster ${name} to recover`;
  const leader = quorumLeader(o);
  if (leader) {
    const down = o.members.filter((m) => !m.healthy).map((m) => m.name);
    return `cluster ${name} has quorum (${leader.name} leads and is healthy): recover is only for a cluster that lost quorum, and nothing was touched` +
      (down.length > 0 ? `; member(s) ${down.join(', ')} are down: the operator's loop (local apply, or the controller) starts them again` : '');
  }
  const intact = o.members.filter((m) => !answers(m) && m.dataLost === false);
  if (intact.length > 0) {
    return `member(s) ${intact.map((m) => m.name).join(', ')} do not answer but still have their data: their applied index cannot be compared, so the survivor could be the wrong one; ` +
      'start them first (svc-operator local apply starts stopped members), or remove the data dir of a member whose data is damaged, then recover again';
  }
  if (!o.members.some(answers)) return `no member of ${name} answers Maintenance.Status: start a member whose data is intact first, then recover again`;
  return undefined;
}

/** The survivor and the report (call after recoveryRefusal said nothing). */
export function recoveryPlan(o: ObservedCluster): RecoveryPlan {
  const candidates = o.members.filter(answers).sort((a, b) => b.appliedIndex! - a.appliedIndex! || byName(a, b));
  const survivor = candidates[0];
  const top = survivor.appliedIndex!;
  const report = [...o.members].sort(byName).map((m): RecoveryMemberReport => {
    const base = { name: m.name, reachable: answers(m), ...(m.id !== undefined ? { id: m.id } : {}), ...(m.appliedIndex !== undefined ? { appliedIndex: m.appliedIndex } : {}), ...(m.revision !== undefined ? { revision: m.revision } : {}) };
    if (m === survivor) return { ...base, loses: 'nothing: its data becomes the cluster\'s' };
    if (answers(m)) {
      return { ...base, loses: `nothing applied (applied ${m.appliedIndex} <= survivor's ${top}); its data is dropped and it joins again, empty` };
    }
    if (m.dataLost === true) return { ...base, loses: `its data is already gone; it joins again, empty` };
    return { ...base, loses: `unknown: it does not answer; anything it applied beyond index ${top} is lost; it joins again, empty` };
  });
  return { survivor, report };
}

function wait(code: Extract<Step, { kind: 'wait' }>['code'], reason: string): Step {
  return { kind: 'wait', code, reason };
}

/** The record of the recovery under way (begun and not finished), if any. */
export function recoveryUnderWay(o: ObservedCluster): RecoveryProgress | undefined {
  const rec = o.recovery?.record;
  return rec && rec.finishedAt === undefined ? rec : undefined;
}

/** The survivor's `--force-new-cluster` restart has taken: the member list has the survivor and none of the old members. */
export function forceDone(o: ObservedCluster, rec: RecoveryProgress): boolean {
  const list = o.clusterMembers;
  if (!list || rec.survivorId === undefined) return false;
  const old = new Set(rec.lost.map((l) => l.id).filter((id): id is string => id !== undefined));
  return list.some((c) => c.id === rec.survivorId) && !list.some((c) => old.has(c.id));
}

/**
 * The recovery's next step, before every other rule; undefined when no recovery is asked for or under way, or when
 * the one under way is past its own steps (the planner's scale-up grows the cluster back, then recoverComplete).
 */
export function recoveryStep(o: ObservedCluster): Step | undefined {
  const r = o.recovery;
  if (!r) return undefined;
  const rec = recoveryUnderWay(o);
  if (!rec) {
    if (r.request === undefined || r.request === r.record?.token) return undefined;
    // a request on a cluster that has quorum (or cannot be recovered safely) is not acted on: the CLIs refuse it
    // before asking, and the controller reports it (recoveryRefusal)
    if (recoveryRefusal(o, '') !== undefined) return undefined;
    if (!o.clusterMembers) return wait('MemberListUnknown', 'a recovery needs the survivor\'s member list (the ids of the members it drops); it did not give it');
    return { kind: 'recoverSnapshot', member: recoveryPlan(o).survivor.name, token: r.request };
  }
  const survivor = o.members.find((m) => m.name === rec.survivor);
  if (!rec.snapshot) {
    if (!survivor || !answers(survivor)) return wait('RecoverySurvivorDown', `recovery ${rec.token}: the survivor ${rec.survivor} does not answer; start it (its data is what the cluster is recovered from)`);
    return { kind: 'recoverSnapshot', member: rec.survivor, token: rec.token };
  }
  // once the restart without the flag is begun, the forced start is history: a survivor restarting (no member list
  // for a moment) must never be forced again (that would remove the members added since)
  const pastForce = rec.step !== 'recoverSnapshot' && rec.step !== 'forceNewCluster';
  if (!pastForce && !forceDone(o, rec)) {
    if (survivor && survivor.running && (survivor.forcedNewCluster === true || !o.clusterMembers)) {
      return wait('MemberStarting', `recovery ${rec.token}: ${rec.survivor} is starting${survivor.forcedNewCluster === true ? ' with --force-new-cluster' : ''}`);
    }
    return { kind: 'forceNewCluster', member: rec.survivor, lost: rec.lost.map((l) => l.name), token: rec.token };
  }
  // lost members the runtime still runs (Kubernetes: pods of the StatefulSet) and the list does not name: they go
  // from the top ordinal down (stopped, their data dropped), then the scale-up adds them again, empty
  const listed = new Set((o.clusterMembers ?? []).map((c) => c.member));
  const lingering = o.members.filter((m) => rec.lost.some((l) => l.name === m.name) && !listed.has(m.name));
  if (lingering.length > 0) {
    const top = byOrdinal(o.members).at(-1)!;
    if (lingering.includes(top) && o.clusterMembersByLeader === true) return { kind: 'retireMember', member: top.name };
    return wait('MemberNotInCluster', `recovery ${rec.token}: member(s) ${lingering.map((m) => m.name).join(', ')} lost their data and are below a member that kept its place; ` +
      'a StatefulSet drops and adds again only its highest member, so they stay out of the cluster (which serves without them) until member replacement brings them back');
  }
  if (survivor?.forcedNewCluster === true) {
    if (!survivor.healthy || !survivor.leader) return wait('MemberStarting', `recovery ${rec.token}: waiting for ${rec.survivor} to lead its cluster alone`);
    return { kind: 'endForceNewCluster', member: rec.survivor, version: survivor.configuredVersion };
  }
  return undefined;
}

/** The step that closes a recovery under way once the cluster is as specified (instead of steady). */
export function recoveryCompletion(o: ObservedCluster): Step | undefined {
  const rec = recoveryUnderWay(o);
  return rec && { kind: 'recoverComplete', member: rec.survivor, token: rec.token };
}

/** The record to save BEFORE carrying out `step` (write-ahead), or the same object when nothing changes. */
export function beginRecovery(rec: RecoveryProgress | undefined, step: Step, o: ObservedCluster, now: number): RecoveryProgress | undefined {
  switch (step.kind) {
    case 'recoverSnapshot': {
      if (rec && rec.token === step.token) return { ...rec, step: step.kind };
      const { survivor, report } = recoveryPlan(o);
      const idOf = (name: string) => o.clusterMembers?.find((c) => c.member === name)?.id ?? o.members.find((m) => m.name === name)?.id;
      const lost = report.filter((m) => m.name !== survivor.name).map((m) => ({ name: m.name, ...(idOf(m.name) !== undefined ? { id: idOf(m.name) } : {}) }));
      // members of the old list the runtime does not run (never started) go with the others
      for (const c of o.clusterMembers ?? []) if (c.id !== survivor.id && !lost.some((l) => l.id === c.id)) lost.push({ name: c.member ?? `(id ${hexMemberId(c.id)})`, id: c.id });
      return { token: step.token, survivor: survivor.name, ...(survivor.id !== undefined ? { survivorId: survivor.id } : {}), lost, report, step: step.kind, startedAt: now };
    }
    case 'forceNewCluster':
    case 'endForceNewCluster':
      return rec ? { ...rec, step: step.kind } : rec;
    case 'recoverComplete':
      return rec ? { ...rec, step: step.kind, finishedAt: now } : rec;
    default:
      return rec;
  }
}

/** The lines the CLIs print for a plan (one per member, the survivor named). */
export function recoveryLines(plan: RecoveryPlan): string[] {
  const rows = [['MEMBER', 'REACHABLE', 'APPLIED', 'REVISION', 'LOSES'], ...plan.report.map((m) => [
    `${m.name}${m.name === plan.survivor.name ? ' (survivor)' : ''}`, m.reachable ? 'yes' : 'no', m.appliedIndex === undefined ? '?' : String(m.appliedIndex), m.revision === undefined ? '?' : String(m.revision), m.loses,
  ])];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return [
    ...rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')),
    `survivor: ${plan.survivor.name} (the highest applied index, ${plan.survivor.appliedIndex}); steps: snapshot of ${plan.survivor.name}, restart it in place with --force-new-cluster (the others stopped, their data dropped), restart it without the flag, grow back to spec.replicas`,
  ];
}

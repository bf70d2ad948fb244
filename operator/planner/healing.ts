// The healing half of the planner (pure): learners promoted once caught up, and members that cannot come back
// replaced through a learner, one at a time.
//
// - A member is lost when the runtime shows its data gone (an empty data dir or claim while its ID is in the
//   member list, a start refused as "already bootstrapped", a corrupt database), or when it reports another member
//   ID than the cluster lists under its name. Nothing else is: a member whose data is intact is restarted (by the
//   runtime, or the upgrade's rules), never replaced.
// - A replacement is planned only while every other member is running, healthy and caught up, with one leader
//   among them (so MemberRemove commits, and the cluster keeps its quorum throughout), no learner is catching up
//   and no other replacement is under way; otherwise `wait` ReplacementNotSafe says why (status: Stalled).
//   A 1-member cluster, or one whose others have no leader, has no quorum to replace with: that needs a person
//   (a restore, or `recover`).
// - replaceMember is one step whose parts each skip when done (MemberRemove of the old ID while it is listed; a
//   fresh data dir and MemberAdd as a learner while no successor is listed; the start): planned again, from the
//   record, until the successor is listed, so an operator crash at any point resumes it. The record is written
//   before the step (the engine) and finished once the successor is a voter (noteReplacements).
// - A learner whose member runs and is caught up with the leader is promoted (promoteMember); a scale-up's learner
//   and a replacement's alike. Until then `wait` CatchingUp (or MemberStarting).
import { catchUpSlack } from './catch-up.js';
import { hexMemberId } from '../api/member-id.js';
import { quorumLeader } from './recovery.js';
import type { ClusterMember, LossCause, MemberLoss, ObservedCluster, ObservedMember, Replacement, ReplacementRecord, Step } from './types.js';

const ordinal = (name: string): number => Number(/(\d+)$/.exec(name)?.[1] ?? -1);

function wait(code: Extract<Step, { kind: 'wait' }>['code'], reason: string): Step {
  return { kind: 'wait', code, reason };
}

/**
 * The replacement under way (begun, its successor not yet a voter), if any; with `o`, only one of a member the runtime
 * still has (a member scaled away meanwhile leaves its record unfinished, and it holds nothing up).
 */
export function replacementUnderWay(record: ReplacementRecord | undefined, o?: ObservedCluster): Replacement | undefined {
  return Object.values(record ?? {}).find((r) => r.finishedAt === undefined && (!o || o.members.some((m) => m.name === r.member)));
}

/** Why member `m` cannot come back (the runtime's evidence, or an ID other than the listed one), or undefined. */
export function lossOf(m: ObservedMember, cm: readonly ClusterMember[] | undefined): MemberLoss | undefined {
  if (m.lost) return m.lost;
  const listed = cm?.find((c) => c.member === m.name && c.started);
  if (m.id !== undefined && listed && listed.id !== m.id) {
    return { cause: 'MemberIdChanged', detail: `it reports member ID ${hexMemberId(m.id)}, the cluster lists ${hexMemberId(listed.id)} under its name` };
  }
  return undefined;
}

/** Is `m` caught up with the leader (its applied index within the allowed gap)? */
function caughtUp(o: ObservedCluster, m: ObservedMember): boolean {
  const leader = o.members.find((x) => x.leader);
  const ref = o.catchUp?.leaderIndex ?? leader?.appliedIndex;
  return ref !== undefined && m.appliedIndex !== undefined && ref - m.appliedIndex <= catchUpSlack(o);
}

/** Why replacing `name` now would not be safe (the others must hold quorum and be healthy), or undefined. */
function unsafe(o: ObservedCluster, name: string): string | undefined {
  const others = o.members.filter((m) => m.name !== name);
  if (others.length === 0) return 'it is the only member: there is no quorum to replace it with; restore the cluster from a backup (spec.restore) or run recover';
  const down = others.filter((m) => !m.running || !m.healthy);
  if (down.length > 0) return `member(s) ${down.map((m) => m.name).join(', ')} not healthy: replacing now could cost the quorum; waiting for them (if they cannot come back either, quorum is lost: run recover)`;
  const leaders = others.filter((m) => m.leader);
  if (leaders.length !== 1) return leaders.length === 0 ? 'no leader among the other members (quorum lost?): a member can only be removed and added through a leader' : `${leaders.length} members report being the leader`;
  const behind = others.find((m) => !m.leader && !caughtUp(o, m));
  if (behind) return `member ${behind.name} is catching up with the leader; replacing waits for it`;
  if (!o.clusterMembers || o.clusterMembersByLeader !== true) return 'the leader did not give the member list';
  const learner = o.clusterMembers.find((c) => c.isLearner && c.member !== name);
  if (learner) return `learner ${learner.member ?? hexMemberId(learner.id)} is still catching up (one membership change at a time)`;
  return undefined;
}

function replaceStep(o: ObservedCluster, member: string, id: string, loss: MemberLoss): Step {
  const join = [...o.members].sort((a, b) => ordinal(a.name) - ordinal(b.name)).map((m) => m.name);
  return { kind: 'replaceMember', member, id, cause: loss.cause, detail: loss.detail, join };
}

/**
 * The step that goes on with a replacement under way or a learner, before any other decision (scaling's resume
 * would take a member removed for its replacement for one to retire); undefined when there is none.
 */
export function continueHealing(o: ObservedCluster): Step | undefined {
  const cm = o.clusterMembers;
  const rec = replacementUnderWay(o.replacements, o);
  if (rec) {
    if (!cm || o.clusterMembersByLeader !== true) return wait('MemberListUnknown', `replacing ${rec.member} (${rec.cause}) needs the leader's member list; the leader did not give it`);
    const entry = cm.find((c) => c.member === rec.member);
    if (!entry || entry.id === rec.oldId) {
      // the old ID still listed, or removed and no successor added yet: the same step again (its done parts skip)
      const why = unsafe(o, rec.member);
      if (why) return wait('ReplacementNotSafe', `replacing ${rec.member} (${rec.cause}) is not safe yet: ${why}`);
      return replaceStep(o, rec.member, rec.oldId, { cause: rec.cause, detail: rec.detail });
    }
    // (a successor listed but not running yet is started by the runtime: its pod, or `local apply`; learnerStep waits)
    if (entry.isLearner) return learnerStep(o, entry, rec.cause);
    return undefined; // a voter under its new ID: the record is finished by the engine (noteReplacements)
  }
  const learner = cm?.find((c) => c.isLearner && c.member !== undefined && o.members.some((m) => m.name === c.member));
  if (learner) return learnerStep(o, learner, undefined);
  return undefined;
}

function learnerStep(o: ObservedCluster, entry: ClusterMember, replaced: LossCause | undefined): Step {
  const m = o.members.find((x) => x.name === entry.member)!;
  const what = replaced ? `${m.name} (replacing a member lost: ${replaced})` : m.name;
  if (!m.running) {
    // a learner that cannot start at all (its volume gone, its node removed) is replaced, not waited for
    if (m.lost) {
      const why = unsafe(o, m.name);
      if (why) return wait('ReplacementNotSafe', `learner ${what} cannot come back (${m.lost.cause}: ${m.lost.detail}) and must be replaced, which is not safe yet: ${why}`);
      return replaceStep(o, m.name, entry.id, m.lost);
    }
    return wait('MemberStarting', `learner ${what} (id ${hexMemberId(entry.id)}) is added and not running yet; waiting for its start (Kubernetes: its pod; local: \`svc-operator local apply\` starts it)`);
  }
  if (!entry.started || m.appliedIndex === undefined) return wait('MemberStarting', `learner ${what} is starting`);
  if (!caughtUp(o, m)) {
    const leader = o.members.find((x) => x.leader);
    return wait('CatchingUp', `learner ${what} is catching up (applied ${m.appliedIndex}, leader ${o.catchUp?.leaderIndex ?? leader?.appliedIndex ?? '?'}, allowed gap ${catchUpSlack(o)}); promoted once caught up`);
  }
  if (!o.members.some((x) => x.leader && x.healthy)) return wait('NoLeader', `learner ${what} is caught up; promoting it needs a leader`);
  return replaced ? { kind: 'promoteMember', member: m.name, id: entry.id, replaced } : { kind: 'promoteMember', member: m.name, id: entry.id };
}

/** A cluster that lost its quorum: no healthy leader, and too few voting members keep their data to ever elect one. */
export interface QuorumLoss {
  /** The members that lost their data (by name, with the runtime's evidence). */
  lost: Array<{ name: string; loss: MemberLoss }>;
  /** The voting members the cluster has (its member list's, else the runtime's). */
  voters: number;
  /** What it means and the way out (the planner's blocked reason; `local status` and `kubectl svc status` show it). */
  message: string;
}

/**
 * Quorum lost, decided here only (replacementStep blocks on it, `local status`, `kubectl svc status` and the SvcCluster's
 * conditions say it): no healthy member leads, and the members that lost their data (`lossOf`: gone data dir or
 * volume, refused as already bootstrapped, corrupt, another ID) leave fewer than a majority of the voters. A member
 * merely down keeps its data and counts: started again, it restores the quorum by itself. Undefined otherwise.
 */
export function quorumLoss(o: ObservedCluster): QuorumLoss | undefined {
  if (quorumLeader(o)) return undefined;
  const lost = [...o.members].sort((a, b) => ordinal(a.name) - ordinal(b.name)).flatMap((m) => {
    const loss = lossOf(m, o.clusterMembers);
    return loss ? [{ name: m.name, loss }] : [];
  });
  const voters = o.clusterMembers?.filter((c) => !c.isLearner).length || o.members.length;
  if (lost.length === 0 || voters - lost.length > voters / 2) return undefined;
  const kept = o.members.filter((m) => !lost.some((l) => l.name === m.name)).map((m) => m.name).sort();
  const gone = `quorum lost: ${lost.map((l) => `${l.name} (${l.loss.cause}: ${l.loss.detail})`).join(', ')} lost their data`;
  const message = kept.length === 0
    ? `${gone}, every member of ${voters}: there is no data left to recover from, and nothing was changed; the way out is a new cluster from a backup ` +
      '(spec.restore.snapshot or spec.restore.source; `svc-operator local backups` and `kubectl svc backups <cluster>` list the restore points)'
    : `${gone}, and the ${kept.length} of ${voters} members left (${kept.join(', ')}) are no majority: no leader can be elected and no write is accepted; ` +
      'replacing a member needs a leader, so nothing is replaced and nothing was changed; the way out is a recovery from the member with the most data: ' +
      '`svc-operator local recover --dry-run` (Kubernetes: `kubectl svc recover <cluster> --dry-run`) shows the survivor and what each member loses, then the same without --dry-run';
  return { lost, voters, message };
}

/** A new replacement of a lost member (the lowest ordinal first), or why it waits; undefined when none is lost. */
export function replacementStep(o: ObservedCluster): Step | undefined {
  const cm = o.clusterMembers;
  const lost = [...o.members]
    .sort((a, b) => ordinal(a.name) - ordinal(b.name))
    .map((m) => ({ m, loss: lossOf(m, cm) }))
    .filter((x): x is { m: ObservedMember; loss: MemberLoss } => x.loss !== undefined);
  if (lost.length === 0) return undefined;
  const { m, loss } = lost[0];
  const also = lost.length > 1 ? ` (also lost: ${lost.slice(1).map((x) => x.m.name).join(', ')}; one at a time)` : '';
  if (!cm || o.clusterMembersByLeader !== true) {
    const quorum = quorumLoss(o);
    if (quorum) return { kind: 'blocked', code: 'QuorumLost', condition: 'MemberFailed', reason: quorum.message };
    return wait('ReplacementNotSafe', `member ${m.name} cannot come back (${loss.cause}: ${loss.detail}); replacing it needs the leader's member list, and no leader gave it (quorum lost? run recover)${also}`);
  }
  const entry = cm.find((c) => c.member === m.name);
  if (!entry) return undefined; // not in the list: scaling's resume rules (retire / MemberNotInCluster) decide
  const why = unsafe(o, m.name);
  if (why) return wait('ReplacementNotSafe', `member ${m.name} cannot come back (${loss.cause}: ${loss.detail}) and must be replaced, which is not safe yet: ${why}${also}`);
  return replaceStep(o, m.name, entry.id, loss);
}

/**
 * While the CORRUPT alarm is raised, nothing but healing happens: a member whose hash differs from the majority's is
 * replaced first (replacementStep, it is lost), then the alarm is disarmed once every member's hash agrees. Without
 * a strict majority nobody can tell which data is right, and a person decides.
 */
export function corruptionStep(o: ObservedCluster): Step | undefined {
  const c = o.corruption;
  if (!c) return undefined;
  const seen = Object.entries(c.hashes).map(([name, h]) => `${name} ${h.hash}`).join(', ');
  if (c.majority === undefined) {
    return wait('CorruptionUndecided', `the CORRUPT alarm is raised and no strict majority of the members shares a KV hash at revision ${c.revision} (${seen || 'none answered'}), so the operator cannot tell which data is right: compare the members' data, replace the wrong ones (member remove, member add) or restore from a backup, then disarm the alarm (etcdctl alarm disarm); writes are refused until then`);
  }
  const leader = o.members.find((m) => m.leader);
  const pending = o.members.filter((m) => c.hashes[m.name]?.hash !== c.majority);
  if (pending.length > 0 || !leader) {
    return wait('CorruptionUndecided', `the CORRUPT alarm is raised; waiting for every member's KV hash at revision ${c.revision} to agree before disarming it (${seen}${leader ? '' : '; no leader'})`);
  }
  return { kind: 'disarmAlarm', member: leader.name, alarm: 'CORRUPT', memberId: c.alarmMemberId };
}

/** The record with the replacement `step` begun at `now` (written before the step acts). */
export function beginReplacement(record: ReplacementRecord | undefined, step: Extract<Step, { kind: 'replaceMember' }>, now: number): ReplacementRecord {
  const cur = record?.[step.member];
  if (cur && cur.finishedAt === undefined && cur.oldId === step.id) return record!;
  return { ...(record ?? {}), [step.member]: { member: step.member, oldId: step.id, cause: step.cause, detail: step.detail, startedAt: now } };
}

/** The record with what the observation shows: the successor's ID once listed, finished once it is a voter. */
export function noteReplacements(record: ReplacementRecord | undefined, o: ObservedCluster): ReplacementRecord | undefined {
  const rec = replacementUnderWay(record, o);
  if (!rec || !o.clusterMembers || o.clusterMembersByLeader !== true) return record;
  const entry = o.clusterMembers.find((c) => c.member === rec.member);
  if (!entry || entry.id === rec.oldId) return record;
  const next: Replacement = { ...rec, newId: entry.id };
  if (!entry.isLearner) next.finishedAt = o.now;
  if (next.newId === rec.newId && next.finishedAt === rec.finishedAt) return record;
  return { ...record, [rec.member]: next };
}

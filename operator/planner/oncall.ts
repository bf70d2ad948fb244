// What a person asks for on call (`svc-operator local <verb>`, `kubectl svc <verb>`), decided on an observation by
// the planner's own rules: pure, no I/O. A decision is a step to carry out (recorded first, like any step) or a
// refusal naming its cause, with nothing touched.
import { catchUpSlack } from './catch-up.js';
import { hexMemberId } from '../api/member-id.js';
import { describeStep } from './steps.js';
import type { ObservedCluster, Step } from './types.js';

/** A step to carry out, or why not (nothing is touched). */
export type OnCallDecision = { step: Step } | { refused: string };

/**
 * The planner's gate before a disruptive step: every member running and healthy, exactly one leader, every follower
 * within catchUpSlack() of the leader's applied index. Undefined when it holds, else why not.
 */
export function gateProblem(o: ObservedCluster): string | undefined {
  const down = o.members.find((m) => !m.running || !m.healthy);
  if (down) return `member ${down.name} is ${down.running ? 'not healthy' : 'not running'}${down.failure ? ` (${down.failure})` : ''}`;
  const leaders = o.members.filter((m) => m.leader);
  if (leaders.length !== 1) return leaders.length === 0 ? 'no member reports being the leader' : `${leaders.length} members report being the leader`;
  const ref = o.catchUp?.leaderIndex ?? leaders[0].appliedIndex;
  const slack = catchUpSlack(o);
  const behind = o.members.find((m) => m !== leaders[0] && (m.appliedIndex === undefined || ref === undefined || ref - m.appliedIndex > slack));
  if (behind) return `member ${behind.name} is catching up (applied ${behind.appliedIndex ?? '?'}, leader ${ref ?? '?'}, allowed gap ${slack})`;
  return undefined;
}

/** A member name the cluster does not have: the refusal listing those it has. */
export function unknownMember(o: ObservedCluster, name: string): string | undefined {
  if (o.members.some((m) => m.name === name)) return undefined;
  return `no member ${name}; the members are ${o.members.map((m) => m.name).sort().join(', ') || 'none'}`;
}

/**
 * `move-leader [--to MEMBER]`: leadership to `to`, else to the most up-to-date follower (then the first by name);
 * only through the gate, never while suspended.
 */
export function moveLeaderDecision(o: ObservedCluster, to?: string): OnCallDecision {
  if (to !== undefined) {
    const unknown = unknownMember(o, to);
    if (unknown) return { refused: unknown };
  }
  const gate = gateProblem(o);
  if (gate) return { refused: `not now: ${gate}; leadership moves only while every member is healthy and caught up` };
  const leader = o.members.find((m) => m.leader)!;
  if (to === leader.name) return { refused: `${to} already leads; nothing to move` };
  const target = to !== undefined
    ? o.members.find((m) => m.name === to)!
    : [...o.members].filter((m) => m !== leader).sort((a, b) => (b.appliedIndex ?? 0) - (a.appliedIndex ?? 0) || (a.name < b.name ? -1 : 1))[0];
  if (!target) return { refused: `${leader.name} is the only member; there is no one to hand leadership to` };
  const step: Step = { kind: 'moveLeader', from: leader.name, to: target.name, ...(target.id !== undefined ? { toId: target.id } : {}) };
  return o.suspended ? { refused: refusedSuspended(step) } : { step };
}

/** `restart [MEMBER]`: the members a rolling restart names (every member, or the one named). */
export function restartDecision(o: ObservedCluster, member?: string): { members: string[] } | { refused: string } {
  if (member !== undefined) {
    const unknown = unknownMember(o, member);
    if (unknown) return { refused: unknown };
  }
  if (o.members.length === 0) return { refused: 'the cluster has no members' };
  if (o.suspended) return { refused: refusedSuspended(undefined) };
  return { members: member !== undefined ? [member] : o.members.map((m) => m.name).sort() };
}

/** What `alarm disarm` looks at: the alarms raised and the evidence of their causes. */
export interface AlarmFacts {
  alarms: Array<{ memberId: string; alarm: string }>;
  /** Each member's database size (Maintenance.Status dbSize) by name; a member that did not answer is missing. */
  dbSizes: Record<string, number>;
  /** ... and the part of it in use (Maintenance.Status dbSizeInUse), where known. */
  dbSizesInUse?: Record<string, number>;
  /** The members' backend quota (bytes). */
  quotaBytes: number;
  /** Each member's KV hash at one revision, by name (taken while CORRUPT is raised). */
  hashes: Record<string, number>;
  members: string[];
}

/** After a NOSPACE relief, the largest database must fit in this share of the quota before the alarm is disarmed. */
export const NOSPACE_HEADROOM = 0.9;

export const mib = (n: number | undefined) => (n === undefined ? '?' : `${(n / 2 ** 20).toFixed(1)} MiB`);

/**
 * Why disarming NOSPACE now would not hold (the one rule for the operator's relief and a person's `alarm disarm`):
 * the largest database is over NOSPACE_HEADROOM of the quota, so the next write would raise the alarm again.
 */
export function noSpacePersists(members: ReadonlyArray<{ name: string; dbSize?: number; dbSizeInUse?: number }>, quota: number): string | undefined {
  const largest = members.filter((m) => m.dbSize !== undefined).sort((a, b) => b.dbSize! - a.dbSize!)[0];
  if (!largest || largest.dbSize! <= quota * NOSPACE_HEADROOM) return undefined;
  return `the NOSPACE alarm's cause persists: the database of ${largest.name} is ${mib(largest.dbSize)} (${mib(largest.dbSizeInUse)} in use) against a quota of ${mib(quota)}; disarmed now, the next write raises it again. Compact and defragment first (the operator does so by itself), raise spec.maintenance.quotaBackendBytes, or grow spec.storage.size`;
}

/**
 * `alarm disarm`: refused while a cause persists (NOSPACE: a member's database still over NOSPACE_HEADROOM of the quota, or one that did not report; CORRUPT:
 * the members' KV hashes not all equal, or a member that did not answer); else the alarms to disarm.
 */
export function disarmDecision(f: AlarmFacts): { disarm: Array<{ memberId: string; alarm: 'NOSPACE' | 'CORRUPT' }> } | { refused: string } {
  if (f.alarms.length === 0) return { refused: 'no alarm is raised; nothing to disarm' };
  const out: Array<{ memberId: string; alarm: 'NOSPACE' | 'CORRUPT' }> = [];
  for (const a of f.alarms) {
    if (a.alarm === 'NOSPACE') {
      const silent = f.members.filter((m) => f.dbSizes[m] === undefined);
      if (silent.length > 0) return { refused: `the NOSPACE alarm's cause may persist: ${silent.join(', ')} did not report its database size; disarm once every member answers` };
      const persists = noSpacePersists(f.members.map((name) => ({ name, dbSize: f.dbSizes[name], dbSizeInUse: f.dbSizesInUse?.[name] })), f.quotaBytes);
      if (persists) return { refused: persists };
      out.push({ memberId: a.memberId, alarm: 'NOSPACE' });
    } else if (a.alarm === 'CORRUPT') {
      const missing = f.members.filter((m) => f.hashes[m] === undefined);
      const distinct = new Set(Object.values(f.hashes));
      if (missing.length > 0 || distinct.size > 1) {
        return { refused: `the CORRUPT alarm's cause persists: ${missing.length > 0 ? `no KV hash from ${missing.join(', ')}` : `the members' KV hashes differ (${f.members.map((m) => `${m} ${f.hashes[m]}`).join(', ')})`}; the operator replaces a member that differs from a strict majority (\`local apply\`), then disarms it itself` };
      }
      out.push({ memberId: a.memberId, alarm: 'CORRUPT' });
    } else {
      return { refused: `unknown alarm ${a.alarm} (member ${hexMemberId(a.memberId)}); not disarmed` };
    }
  }
  return { disarm: out };
}

function refusedSuspended(step: Step | undefined): string {
  return `the cluster is suspended (break-glass): nothing is changed; resume it first (\`svc-operator local resume\`, \`kubectl svc resume\`)${step ? `, then this would ${describeStep(step)}` : ''}`;
}

/** Writes refused by a raised alarm: the reason (condition WritesRefused), and what it means with the way out. */
export interface WritesRefused {
  reason: 'NoSpaceAlarm' | 'CorruptAlarm';
  message: string;
}

/**
 * What refuses writes, from the alarms the observation read (one place for `local status`, `kubectl svc status` and
 * the SvcCluster's WritesRefused condition); undefined when no alarm is raised. Members by hex ID (and name).
 */
export function writesRefused(o: ObservedCluster, cluster: string): WritesRefused | undefined {
  const alarms = o.alarms ?? [];
  const who = (alarm: string) => {
    const ids = [...new Set(alarms.filter((a) => a.alarm === alarm).map((a) => a.memberId))].sort();
    const name = (id: string) => (id === '0' ? 'the cluster (member 0)' : `member ${hexMemberId(id)}${((n) => (n ? ` (${n})` : ''))(o.members.find((m) => m.id === id)?.name ?? o.clusterMembers?.find((c) => c.id === id)?.member)}`);
    return ids.length === 0 ? undefined : ids.map(name).join(', ');
  };
  const corrupt = who('CORRUPT');
  const noSpace = who('NOSPACE');
  const parts = [
    corrupt && `the CORRUPT alarm is raised for ${corrupt}: the members' data may differ, and every write fails with "corrupt cluster"; ` +
      `the operator compares the members' KV hashes, replaces a member that differs from a strict majority, then disarms it (locally: \`svc-operator local apply\`); ` +
      `with no majority a person decides (\`svc-operator local alarm list ${cluster}\`, \`kubectl svc alarm list ${cluster}\`)`,
    noSpace && `the NOSPACE alarm is raised for ${noSpace}: the database reached its quota, and every write fails with "database space exceeded"; ` +
      `the operator relieves it (compaction, every member defragmented, then the alarm disarmed; locally: \`svc-operator local apply\`); ` +
      'if the data does not fit even then, raise spec.maintenance.quotaBackendBytes or delete keys',
  ].filter((p): p is string => p !== undefined);
  if (parts.length === 0) return undefined;
  return { reason: corrupt ? 'CorruptAlarm' : 'NoSpaceAlarm', message: `writes are refused, reads go on: ${parts.join('; ')}` };
}

// The maintenance half of the planner (pure): compaction, defragmentation and the NOSPACE alarm.
//
// - A round is an optional compaction, then its members defragmented one at a time like an upgrade's restarts:
//   followers first in name order, the leader last after `moveLeader` to a member already done, each only while every
//   member runs healthy under one leader and the followers are caught up (else `wait` MaintenanceNotSafe). A round
//   begun goes on before any other rule but healing; the record (MaintenanceRecord) is written before each step
//   (beginMaintenance), so a restarted operator resumes it: a member whose defragmentation was begun and not
//   finished is defragmented again (it is idempotent).
// - NOSPACE (a member's database reached the quota; writes are refused, reads and deletes go on): a round `NoSpace`
//   compacts at the leader's revision less the retention the spec keeps (autoCompaction revision: that many
//   revisions; periodic: the members' own compactor keeps its period, the operator does not compact; none: the
//   history up to now), defragments every member, then disarms each NOSPACE alarm, once the largest database fits in
//   NOSPACE_HEADROOM of the quota. If it does not fit, `blocked` NoSpaceNotRelieved (Stalled) with the numbers and
//   the two ways out: the alarm stays raised, so no write is acknowledged that the quota cannot hold.
// - A steady cluster starts a round for a request (`local defrag`/`local compact`, the svc.dev/maintenance-request
//   annotation; any time), or moves leadership for one (`move-leader`: through the same gate, answered once), a defrag schedule's slot or a member past a threshold (fragmentation: the unused share of
//   its file; quotaUsage: its file as a share of the quota, only when defragmenting would bring it under), those two
//   only inside the window when one is set.
import { dueSlot } from '../backup/schedule.js';
import { DEFAULT_VOLUME, inWindow, parseShare, parseWindow, quotaBytes, volumeBytes } from '../api/maintenance.js';
import { quantityBytes } from '../api/quantity.js';
import { scheduleProblem } from '../api/cron.js';
import type { SvcClusterSpec } from '../api/types.js';
import { catchUpSlack } from './catch-up.js';
import { mib, moveLeaderDecision, NOSPACE_HEADROOM, noSpacePersists } from './oncall.js';
import type { MaintenanceReason, MaintenanceRecord, MaintenanceRound, ObservedCluster, ObservedMember, Step } from './types.js';


const byName = (a: ObservedMember, b: ObservedMember) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function wait(reason: string): Step {
  return { kind: 'wait', code: 'MaintenanceNotSafe', reason };
}

/**
 * The quota members run with: the spec's, measured against the volumes as they are (a larger spec.storage.size not yet
 * grown leaves a derived quota where it was; runtime/kubernetes/manifests.ts onLiveVolumes is the same rule).
 */
export function memberQuota(spec: SvcClusterSpec, o: ObservedCluster): number {
  return quotaBytes(o.volume ? { ...spec, storage: { ...spec.storage, size: o.volume.size } } : spec);
}

/** The round under way (begun, not finished), if any. */
export function roundUnderWay(record: MaintenanceRecord | undefined): MaintenanceRound | undefined {
  const r = record?.round;
  return r && r.finishedAt === undefined ? r : undefined;
}

/** Why a member may not be disrupted now (every member running and healthy, one leader, followers caught up), or undefined. */
function unsafe(o: ObservedCluster): string | undefined {
  const down = o.members.filter((m) => !m.running || !m.healthy);
  if (down.length > 0) return `member(s) ${down.map((m) => m.name).join(', ')} not healthy`;
  const leaders = o.members.filter((m) => m.leader);
  if (leaders.length !== 1) return leaders.length === 0 ? 'no leader' : `${leaders.length} members report being the leader`;
  const ref = o.catchUp?.leaderIndex ?? leaders[0].appliedIndex;
  const slack = catchUpSlack(o);
  const behind = o.members.find((m) => !m.leader && (m.appliedIndex === undefined || ref === undefined || ref - m.appliedIndex > slack));
  if (behind) return `member ${behind.name} is catching up (applied ${behind.appliedIndex ?? '?'}, leader ${ref ?? '?'})`;
  return undefined;
}

/**
 * The revision a compaction keeps the spec's history from (undefined: the operator does not compact); `asked`: a
 * person asked for it (`compact`), so a periodic retention does not hold it back.
 */
export function compactRevision(spec: SvcClusterSpec, leaderRevision: number | undefined, asked = false): number | undefined {
  if (leaderRevision === undefined) return undefined;
  const ac = spec.maintenance?.autoCompaction;
  if (ac?.retention !== undefined && ac.retention !== '0') {
    // periodic: which revision was written when is the members' own knowledge; their compactor keeps the period
    if ((ac.mode ?? 'periodic') === 'periodic') return asked && leaderRevision > 1 ? leaderRevision : undefined;
    const rev = leaderRevision - Number(ac.retention);
    return rev > 1 ? rev : undefined;
  }
  return leaderRevision > 1 ? leaderRevision : undefined;
}

/**
 * The step that goes on with maintenance before the other rules (a round under way; the NOSPACE alarm raised);
 * undefined when there is none.
 */
export function maintenanceStep(spec: SvcClusterSpec, o: ObservedCluster): Step | undefined {
  const record = o.maintenance?.record;
  const round = roundUnderWay(record);
  if (round) return roundStep(spec, o, round);
  if (!o.noSpace || o.noSpace.length === 0) return undefined;
  const why = unsafe(o);
  if (why) return wait(`the NOSPACE alarm is raised (writes are refused); relieving it waits: ${why}`);
  const names = o.members.map((m) => m.name).sort();
  return roundStep(spec, o, { id: `nospace-${o.now}`, reason: 'NoSpace', startedAt: o.now, members: names, defrags: {} });
}

/** A member runs with another configuration than the spec's (a raised quota, a grown volume): its restart comes first. */
function rolloutPending(o: ObservedCluster): boolean {
  return o.revision !== undefined && o.members.some((m) => m.configRevision !== undefined && m.configRevision !== o.revision!.config);
}

/** The next step of `round` (resumed from its record and the observation). */
function roundStep(spec: SvcClusterSpec, o: ObservedCluster, round: MaintenanceRound): Step | undefined {
  const why = unsafe(o);
  const what = `${round.reason} maintenance ${round.id}`;
  if (why) return wait(`${what} waits before its next step: ${why}`);
  const leader = o.members.find((m) => m.leader)!;
  const base = { reason: round.reason, id: round.id };
  if (round.compactRevision !== undefined && !round.compacted) return { kind: 'compact', member: leader.name, revision: round.compactRevision, ...base };
  if (round.compactRevision === undefined && !round.compacted && (round.reason === 'NoSpace' || (round.reason === 'Requested' && round.members.length === 0))) {
    // asked for: up to now less a revision retention (periodic's exception does not hold: a person asked)
    const rev = compactRevision(spec, leader.revision, round.reason === 'Requested');
    if (rev !== undefined) return { kind: 'compact', member: leader.name, revision: rev, ...base };
  }
  const members = [...o.members].sort(byName);
  const pending = members.filter((m) => round.members.includes(m.name) && round.defrags[m.name]?.finishedAt === undefined);
  const follower = pending.find((m) => !m.leader);
  if (follower) return { kind: 'defragMember', member: follower.name, ...base };
  if (pending.length > 0) {
    // the leader last, after leadership moved to the most up-to-date member already defragmented (or not in the round)
    const others = members.filter((m) => m !== leader);
    if (others.length === 0) return { kind: 'defragMember', member: leader.name, ...base };
    const to = [...others].sort((a, b) => (b.appliedIndex ?? 0) - (a.appliedIndex ?? 0) || byName(a, b))[0];
    return { kind: 'moveLeader', from: leader.name, to: to.name, ...(to.id ? { toId: to.id } : {}) };
  }
  if (round.reason === 'NoSpace' && o.noSpace && o.noSpace.length > 0) {
    // members about to run with a raised quota (or a grown volume's) are restarted first (the rules after this)
    if (rolloutPending(o)) return undefined;
    const quota = memberQuota(spec, o);
    const largest = [...o.members].sort((a, b) => (b.dbSize ?? Infinity) - (a.dbSize ?? Infinity))[0];
    if (largest.dbSize === undefined || largest.dbSize > quota * NOSPACE_HEADROOM) {
      return {
        kind: 'blocked', code: 'NoSpaceNotRelieved', condition: 'NoSpace',
        reason: `the NOSPACE alarm stays raised: after compaction and defragmentation the database of ${largest.name} is ${mib(largest.dbSize)} ` +
          `(${mib(largest.dbSizeInUse)} in use) against a quota of ${mib(quota)} (disarmed only under ${Math.round(NOSPACE_HEADROOM * 100)}% of it); ` +
          'the data does not fit: raise spec.maintenance.quotaBackendBytes (at most spec.storage.size), or grow spec.storage.size (the derived quota follows), or delete keys; writes are refused until then, reads go on',
      };
    }
    return { kind: 'disarmAlarm', member: leader.name, alarm: 'NOSPACE', memberId: [...o.noSpace].sort()[0], relief: noSpaceRelief(round, largest, quota) };
  }
  // a round not begun with nothing to do (a compaction asked for on a cluster with no history): nothing to do
  if (o.maintenance?.record?.round?.id !== round.id) return undefined;
  // every part done: the engine finishes the record (noteMaintenance); nothing to do meanwhile
  return { kind: 'wait', code: 'MaintenanceNotSafe', reason: `${what} is done; recording it` };
}

/** The members' default --max-request-bytes (server/config/flag-table.ts). */
const MAX_REQUEST_BYTES = 1_572_864;

/**
 * What let the NOSPACE alarm go, as it happened: the round's compaction and defragmentation, or a raised quota, with
 * the numbers. The quota counts as raised only when that is certain: the alarm went up when a member's file plus one
 * request (at most --max-request-bytes, 1.5 MiB by default) passed the quota of then, so a quota now above the largest
 * file the round found before defragmenting plus that much was raised since.
 */
export function noSpaceRelief(round: MaintenanceRound, largest: ObservedMember, quota: number): string {
  const fits = `the largest database (${largest.name}, ${mib(largest.dbSize)}) fits in the quota of ${mib(quota)}`;
  const befores = Object.values(round.defrags).map((d) => d.before).filter((b): b is number => b !== undefined);
  const freed = [round.compacted ? 'compacted' : '', befores.length > 0 ? 'defragmented' : ''].filter(Boolean).join(' and ');
  if (befores.length > 0 && quota > Math.max(...befores) + MAX_REQUEST_BYTES) {
    return `the quota was raised to ${mib(quota)} (${freed || 'nothing freed'} before, which was not enough); ${fits}`;
  }
  return freed ? `${freed}; ${fits} again` : `${fits} again`;
}

/** A round a steady cluster starts now (a request, a slot of the schedule, a threshold passed), or undefined. */
export function startMaintenance(spec: SvcClusterSpec, o: ObservedCluster): Step | undefined {
  const m = o.maintenance;
  if (!m) return undefined;
  const record = m.record;
  const names = o.members.map((x) => x.name).sort();
  const begin = (id: string, reason: MaintenanceReason, members: string[]): Step | undefined => roundStep(spec, o, { id, reason, startedAt: o.now, members, defrags: {} });
  const req = m.request;
  if (req && req.token !== '' && req.token !== record?.lastRequest) {
    if (req.action === 'move-leader') {
      // by the on-call rule (the gate; a member named that leads already is refused before it is asked for)
      const d = moveLeaderDecision(o, req.member);
      return 'step' in d && d.step.kind === 'moveLeader' ? { ...d.step, request: req.token } : undefined;
    }
    if (req.action === 'compact') return begin(req.token, 'Requested', []);
    if (req.member !== undefined && !names.includes(req.member)) return undefined; // refused before it was recorded (requestMaintenance)
    return begin(req.token, 'Requested', req.member !== undefined ? [req.member] : names);
  }
  const d = spec.maintenance?.defrag;
  if (!d) return undefined;
  const window = d.window ? parseWindow(d.window) : undefined;
  if (d.window && (!window || !inWindow(window, d.timeZone, o.now))) return undefined;
  if (d.schedule && !scheduleProblem(d.schedule, d.timeZone)) {
    const last = record?.lastSlot ? Date.parse(record.lastSlot) : undefined;
    const anchor = new Date(last !== undefined && last > m.created ? last : m.created);
    const slot = dueSlot(d.schedule, d.timeZone, anchor, new Date(o.now));
    if (slot) return begin(slot.toISOString(), 'Scheduled', names);
  }
  const over = thresholdPassed(spec, o.members, memberQuota(spec, o));
  if (over) return begin(`threshold-${o.now}`, 'Threshold', names);
  return undefined;
}

/** The first member past a threshold of spec.maintenance.defrag (and why), or undefined. */
export function thresholdPassed(spec: SvcClusterSpec, members: ObservedMember[], quota = quotaBytes(spec)): string | undefined {
  const t = spec.maintenance?.defrag?.threshold;
  if (!t) return undefined;
  const frag = parseShare(t.fragmentation);
  const usage = parseShare(t.quotaUsage);
  for (const m of [...members].sort(byName)) {
    if (m.dbSize === undefined || m.dbSizeInUse === undefined || m.dbSize <= 0) continue;
    const unused = (m.dbSize - m.dbSizeInUse) / m.dbSize;
    if (frag !== undefined && unused >= frag) return `${m.name}: ${Math.round(unused * 100)}% of its database file unused`;
    // only when defragmenting brings it under: a database that is simply large is no reason to defragment again
    if (usage !== undefined && m.dbSize / quota >= usage && m.dbSizeInUse / quota < usage) return `${m.name}: its database file is ${Math.round((m.dbSize / quota) * 100)}% of the quota`;
  }
  return undefined;
}

/** The record with maintenance `step` begun (written before it acts): its round started, the part begun. */
export function beginMaintenance(record: MaintenanceRecord | undefined, step: Step, o: ObservedCluster): MaintenanceRecord | undefined {
  // a leadership move asked for: answered once (its token recorded before the move)
  if (step.kind === 'moveLeader' && step.request !== undefined) return record?.lastRequest === step.request ? record : { ...(record ?? {}), lastRequest: step.request };
  if (step.kind !== 'compact' && step.kind !== 'defragMember') return record;
  let round = record?.round?.id === step.id && record.round.finishedAt === undefined ? record.round : undefined;
  const next: MaintenanceRecord = { ...(record ?? {}) };
  if (!round) {
    const names = o.members.map((m) => m.name).sort();
    const req = o.maintenance?.request;
    const members = step.reason === 'Requested' && req?.token === step.id ? (req.action === 'compact' ? [] : req.member !== undefined ? [req.member] : names) : names;
    round = { id: step.id, reason: step.reason, startedAt: o.now, members, defrags: {} };
    if (step.reason === 'Scheduled') next.lastSlot = step.id;
    if (step.reason === 'Requested') next.lastRequest = step.id;
  }
  if (step.kind === 'compact') {
    if (round.compactRevision === step.revision) return record;
    round = { ...round, compactRevision: step.revision };
  } else {
    // begun and looked at again (Kubernetes: waiting for the endpoints to drop it): the first reading stays
    const cur = round.defrags[step.member];
    if (cur && cur.finishedAt === undefined && round === record?.round) return record;
    const before = o.members.find((m) => m.name === step.member)?.dbSize;
    round = { ...round, defrags: { ...round.defrags, [step.member]: { begunAt: o.now, ...(before !== undefined ? { before } : {}) } } };
  }
  return { ...next, round };
}

/** The record after the act of `step`: the compaction done, or the member's bytes after. */
export function finishMaintenancePart(record: MaintenanceRecord, step: Step, now: number, after?: number): MaintenanceRecord {
  const round = record.round;
  if (!round) return record;
  if (step.kind === 'compact') return { ...record, round: { ...round, compacted: true } };
  if (step.kind !== 'defragMember') return record;
  const d = round.defrags[step.member];
  return { ...record, round: { ...round, defrags: { ...round.defrags, [step.member]: { ...d, ...(after !== undefined ? { after } : {}), finishedAt: now } } } };
}

/** The record finished once its round is done (every member defragmented, and for NoSpace the alarm disarmed). */
export function noteMaintenance(record: MaintenanceRecord | undefined, o: ObservedCluster): MaintenanceRecord | undefined {
  const round = roundUnderWay(record);
  if (!round) return record;
  const present = new Set(o.members.map((m) => m.name));
  const defragged = round.members.every((n) => !present.has(n) || round.defrags[n]?.finishedAt !== undefined);
  const compacted = round.compactRevision === undefined || round.compacted === true;
  const compactOnly = round.members.length === 0;
  if (compactOnly && round.compactRevision === undefined) return record;
  if (!defragged || !compacted) return record;
  if (round.reason === 'NoSpace' && o.noSpace && o.noSpace.length > 0) return record;
  return { ...record, round: { ...round, finishedAt: o.now } };
}

/** One line for a member defragmented (the MemberDefragmented Event, `local apply`'s output). */
export function describeDefrag(d: { member: string; reason: MaintenanceReason; before?: number; after?: number }): string {
  const gain = d.before !== undefined && d.after !== undefined ? `; ${mib(Math.max(0, d.before - d.after))} given back` : '';
  return `member ${d.member} defragmented (${d.reason}): database file ${d.before ?? '?'} -> ${d.after ?? '?'} bytes (${mib(d.before)} -> ${mib(d.after)}${gain})`;
}

/**
 * A larger spec.storage.size than the members' volumes: `expandVolumes` (the claims grown in place, the StatefulSet
 * recreated with its pods orphaned) when the class allows expansion, else `blocked` VolumeExpansionNotAllowed with
 * nothing changed (the members keep their volumes and the quota derived from them). Undefined when they match.
 */
export function volumeStep(spec: SvcClusterSpec, o: ObservedCluster): Step | undefined {
  const v = o.volume;
  const want = volumeBytes(spec);
  const have = v ? quantityBytes(v.size) : undefined;
  if (!v || want === undefined || have === undefined) return undefined;
  const size = String(spec.storage?.size ?? DEFAULT_VOLUME);
  const small = o.members.map((m) => m.name).filter((n) => v.claims[n] !== undefined && (quantityBytes(v.claims[n]) ?? 0) < want).sort();
  if (want < have) {
    return {
      kind: 'blocked', code: 'VolumeShrinkRefused', condition: 'VolumeExpansion',
      reason: `spec.storage.size ${size} is smaller than the members' volumes (${v.size}): volumes do not shrink; nothing was changed; set spec.storage.size to ${v.size} or more`,
    };
  }
  if (want === have && small.length === 0) return undefined;
  if (v.expandable === false) {
    return {
      kind: 'blocked', code: 'VolumeExpansionNotAllowed', condition: 'VolumeExpansion',
      reason: `spec.storage.size ${size} is larger than the members' volumes (${v.size}), and StorageClass ${v.storageClass ?? '(default)'} does not allow volume expansion (allowVolumeExpansion is not true): nothing was changed; set spec.storage.size back to ${v.size}, or allow expansion on the class (its provisioner must support it)`,
    };
  }
  return { kind: 'expandVolumes', size, from: v.size, members: small };
}

/**
 * Why disarming `alarm` now would not hold, because its cause persists (the CLI's `alarm disarm` refuses with it,
 * nothing touched), or undefined: NOSPACE while the largest database is over NOSPACE_HEADROOM of the quota (the next
 * write would raise it again), CORRUPT while the members' KV hashes at one revision differ.
 */
export function disarmProblem(spec: SvcClusterSpec, o: ObservedCluster, alarm: 'NOSPACE' | 'CORRUPT'): string | undefined {
  if (alarm === 'CORRUPT') {
    const c = o.corruption;
    if (!c) return undefined;
    const hashes = new Set(Object.values(c.hashes).map((h) => h.hash));
    if (hashes.size <= 1 && Object.keys(c.hashes).length === o.members.length) return undefined;
    return `the CORRUPT alarm's cause persists: the members' KV hashes at revision ${c.revision} differ (${Object.entries(c.hashes).map(([n, h]) => `${n} ${h.hash}`).join(', ') || 'none answered'}); the operator replaces a member that differs from a strict majority and then disarms it itself`;
  }
  return noSpacePersists(o.members, memberQuota(spec, o));
}

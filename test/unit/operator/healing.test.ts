// The planner's healing (operator/planner/healing.ts), pure: which member is lost, when replacing it is safe, the
// learner's promotion, resuming a replacement from its record, and the words for a member that failed outside an
// upgrade. Properties over generated observations: never a replacement of a member whose data is intact, never one
// without every other member healthy under one leader.
import { expect } from 'chai';
import fc from 'fast-check';
import type { SvcClusterSpec } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { computeStatus } from '../../../operator/controller/status.js';
import { noteReplacements, quorumLoss, replacementUnderWay } from '../../../operator/planner/healing.js';
import { plan } from '../../../operator/planner/plan.js';
import type { ClusterMember, LossCause, ObservedCluster, ObservedMember, ReplacementRecord } from '../../../operator/planner/types.js';

const V = '3.5.21';
const spec = (replicas = 3): SvcClusterSpec => withDefaults({ version: V, replicas });

function member(i: number, over: Partial<ObservedMember> = {}): ObservedMember {
  return { name: `kv-${i}`, id: String(100 + i), configuredVersion: V, release: V, clusterVersion: '3.5.0', running: true, healthy: true, leader: i === 0, appliedIndex: 500, ...over };
}

function cluster(members: ObservedMember[], list?: ClusterMember[], extra: Partial<ObservedCluster> = {}): ObservedCluster {
  const clusterMembers = list ?? members.map((m, i) => ({ id: String(100 + i), member: m.name, started: true }));
  return { now: 5_000, members, authEnabled: false, clusterMembers, clusterMembersByLeader: true, catchUp: { leaderIndex: 500, ratePerSecond: 0 }, ...extra };
}

const lostAt = (i: number, cause: LossCause = 'DataLost'): ObservedMember =>
  member(i, { running: false, healthy: false, leader: false, release: undefined, clusterVersion: undefined, appliedIndex: undefined, id: undefined, failure: 'exited with code 1 while starting', lost: { cause, detail: `the data dir of kv-${i} is missing` } });

describe('operator planner: healing (replacing lost members, learners)', () => {
  it('replaces a lost follower through a learner while the others hold quorum: its old ID, the cause, every member joining', () => {
    const step = plan(spec(), cluster([member(0), member(1), lostAt(2)]), undefined);
    expect(step).to.deep.equal({ kind: 'replaceMember', member: 'kv-2', id: '102', cause: 'DataLost', detail: 'the data dir of kv-2 is missing', join: ['kv-0', 'kv-1', 'kv-2'] });
  });

  it('a member reporting another ID than the list has under its name is lost (MemberIdChanged)', () => {
    const step = plan(spec(), cluster([member(0), member(1), member(2, { id: '999' })]), undefined);
    expect(step).to.include({ kind: 'replaceMember', member: 'kv-2', id: '102', cause: 'MemberIdChanged' });
  });

  it('waits with ReplacementNotSafe, saying why, when the others are not all healthy under one leader, or none are left', () => {
    const sick = plan(spec(), cluster([member(0), member(1, { healthy: false }), lostAt(2)]), undefined);
    expect(sick).to.include({ kind: 'wait', code: 'ReplacementNotSafe' });
    expect((sick as { reason: string }).reason).to.match(/kv-2 cannot come back \(DataLost.*not safe yet: member\(s\) kv-1 not healthy/);
    const noLeader = plan(spec(), cluster([member(0, { leader: false }), member(1), lostAt(2)]), undefined);
    expect((noLeader as { reason: string }).reason).to.match(/no leader among the other members/);
    const alone = plan(spec(1), cluster([lostAt(0)], [{ id: '100', member: 'kv-0', started: true }], { clusterMembersByLeader: false }), undefined);
    // its only member lost its data: the quorum is lost, with nothing to recover from
    expect(alone).to.include({ kind: 'blocked', code: 'QuorumLost' });
    expect((alone as { reason: string }).reason).to.match(/^quorum lost: kv-0 \(DataLost: .*\) lost their data, every member of 1: there is no data left to recover from/);
    const two = plan(spec(), cluster([member(0), lostAt(1), lostAt(2)]), undefined);
    expect((two as { reason: string }).reason).to.match(/no leader|also lost: kv-2/);
  });

  it('quorum lost (two of three members lost their data, no leader): blocked QuorumLost naming the lost members and recover; the status says the same', () => {
    // the survivor answers alone: no leader, and the member list it gives is not a leader's
    const o = cluster([member(0, { leader: false, healthy: false }), lostAt(1), lostAt(2)], undefined, { clusterMembersByLeader: false });
    const lost = quorumLoss(o)!;
    expect(lost.lost.map((l) => l.name)).to.deep.equal(['kv-1', 'kv-2']);
    const message = 'quorum lost: kv-1 (DataLost: the data dir of kv-1 is missing), kv-2 (DataLost: the data dir of kv-2 is missing) lost their data, ' +
      'and the 1 of 3 members left (kv-0) are no majority: no leader can be elected and no write is accepted; replacing a member needs a leader, ' +
      'so nothing is replaced and nothing was changed; the way out is a recovery from the member with the most data: `svc-operator local recover --dry-run` ' +
      '(Kubernetes: `kubectl svc recover <cluster> --dry-run`) shows the survivor and what each member loses, then the same without --dry-run';
    expect(lost.message).to.equal(message);
    const step = plan(spec(), o, undefined);
    expect(step).to.deep.equal({ kind: 'blocked', code: 'QuorumLost', condition: 'MemberFailed', reason: message });
    const st = computeStatus({ spec: spec(), observed: o, pods: new Map(), step, now: new Date(0) });
    expect(st.phase).to.equal('Blocked');
    for (const type of ['Stalled', 'Ready', 'Available'] as const) expect(st.conditions!.find((c) => c.type === type), type).to.include({ reason: 'QuorumLost', message });
    expect(st.conditions!.find((c) => c.type === 'Stalled')!.status).to.equal('True');
    // one member lost and one merely down (its data intact): not a quorum loss, started again it restores the quorum
    const down = cluster([member(0, { leader: false, healthy: false }), member(1, { running: false, healthy: false, leader: false, appliedIndex: undefined }), lostAt(2)], undefined, { clusterMembersByLeader: false });
    expect(quorumLoss(down)).to.equal(undefined);
    expect(plan(spec(), down, undefined)).to.not.include({ code: 'QuorumLost' });
    // a healthy leader: never
    expect(quorumLoss(cluster([member(0), lostAt(1), lostAt(2)]))).to.equal(undefined);
  });

  it('status: a replacement not safe yet is Stalled with its reason; members show learner and their last replacement', () => {
    const o = cluster([member(0), member(1, { healthy: false }), lostAt(2)]);
    const step = plan(spec(), o, undefined);
    const st = computeStatus({ spec: spec(), observed: o, pods: new Map(), step, now: new Date(0) });
    expect(st.conditions!.find((c) => c.type === 'Stalled')).to.include({ status: 'True', reason: 'ReplacementNotSafe' });
    const rec: ReplacementRecord = { 'kv-2': { member: 'kv-2', oldId: '102', cause: 'DataCorrupt', detail: 'db corrupt', startedAt: 1000 } };
    const o2 = cluster([member(0), member(1), member(2, { id: '777', appliedIndex: 10 })], [
      { id: '100', member: 'kv-0', started: true }, { id: '101', member: 'kv-1', started: true }, { id: '777', member: 'kv-2', started: true, isLearner: true },
    ], { replacements: rec });
    const st2 = computeStatus({ spec: spec(), observed: o2, pods: new Map(), step: plan(spec(), o2, undefined), now: new Date(0) });
    const m2 = st2.members!.find((m) => m.name === 'kv-2')!;
    expect(m2.learner).to.equal(true);
    expect(m2.replaced).to.deep.equal({ cause: 'DataCorrupt', detail: 'db corrupt', time: new Date(1000).toISOString(), previousId: '66' });
  });

  it('resumes a replacement from its record: the old ID removed and nothing added yet is the same step, never a retire', () => {
    const rec: ReplacementRecord = { 'kv-2': { member: 'kv-2', oldId: '102', cause: 'DataLost', detail: 'gone', startedAt: 1 } };
    const list = [{ id: '100', member: 'kv-0', started: true }, { id: '101', member: 'kv-1', started: true }];
    const stopped = member(2, { running: false, healthy: false, leader: false, release: undefined, appliedIndex: undefined, id: undefined });
    const step = plan(spec(), cluster([member(0), member(1), stopped], list, { replacements: rec }), undefined);
    expect(step).to.include({ kind: 'replaceMember', member: 'kv-2', id: '102' });
    // without the record, a highest member missing from the list is retired (scaling's resume): the record decides
    expect(plan(spec(), cluster([member(0), member(1), stopped], list), undefined).kind).to.equal('retireMember');
  });

  it('a replacement record of a member scaled away holds nothing up: the next lost member is replaced and resumed', () => {
    const stale: ReplacementRecord = { 'kv-4': { member: 'kv-4', oldId: '104', cause: 'DataLost', detail: 'gone', startedAt: 1 } };
    const step = plan(spec(), cluster([member(0), member(1), lostAt(2)], undefined, { replacements: stale }), undefined);
    expect(step).to.include({ kind: 'replaceMember', member: 'kv-2' });
    const both: ReplacementRecord = { ...stale, 'kv-2': { member: 'kv-2', oldId: '102', cause: 'DataLost', detail: 'gone', startedAt: 2 } };
    const list = [{ id: '100', member: 'kv-0', started: true }, { id: '101', member: 'kv-1', started: true }, { id: '555', member: 'kv-2', started: true, isLearner: true }];
    const o = cluster([member(0), member(1), member(2, { id: '555', healthy: false })], list, { replacements: both });
    expect(plan(spec(), o, undefined)).to.include({ kind: 'promoteMember', member: 'kv-2', replaced: 'DataLost' });
    expect(replacementUnderWay(both, o)!.member).to.equal('kv-2');
    expect(noteReplacements(both, o)!['kv-2'].newId).to.equal('555');
  });

  it('promotes a learner once caught up (a replacement: with its cause), waits while it catches up or starts', () => {
    const rec: ReplacementRecord = { 'kv-1': { member: 'kv-1', oldId: '101', cause: 'AlreadyBootstrapped', detail: 'refused', startedAt: 1 } };
    const list = (started = true) => [{ id: '100', member: 'kv-0', started: true }, { id: '555', member: 'kv-1', started, isLearner: true }, { id: '102', member: 'kv-2', started: true }];
    const at = (applied: number, started = true) => cluster([member(0), member(1, { id: '555', appliedIndex: applied, healthy: false }), member(2)], list(started), { replacements: rec });
    expect(plan(spec(), at(450), undefined)).to.deep.equal({ kind: 'promoteMember', member: 'kv-1', id: '555', replaced: 'AlreadyBootstrapped' });
    expect(plan(spec(), at(10), undefined)).to.include({ kind: 'wait', code: 'CatchingUp' });
    expect(plan(spec(), at(450, false), undefined)).to.include({ kind: 'wait', code: 'MemberStarting' });
    // a learner that cannot start at all (its claim Lost) is replaced under its own ID, not waited for
    const gone = cluster([member(0), member(1, { id: undefined, running: false, healthy: false, appliedIndex: undefined, lost: { cause: 'VolumeLost', detail: 'its claim data-kv-1 is Lost' } }), member(2)], list(false), { replacements: rec });
    expect(plan(spec(), gone, undefined)).to.include({ kind: 'replaceMember', member: 'kv-1', id: '555', cause: 'VolumeLost' });
    const notRunning = cluster([member(0), member(1, { id: undefined, running: false, healthy: false, appliedIndex: undefined }), member(2)], list(false), { replacements: rec });
    expect(plan(spec(), notRunning, undefined)).to.include({ kind: 'wait', code: 'MemberStarting' });
    // a scale-up's learner: promoted without a cause
    const grown = cluster([member(0), member(1), member(2), member(3, { id: '103', healthy: false })], [...list().slice(0, 1), { id: '101', member: 'kv-1', started: true }, { id: '102', member: 'kv-2', started: true }, { id: '103', member: 'kv-3', started: true, isLearner: true }]);
    expect(plan(spec(4), grown, undefined)).to.deep.equal({ kind: 'promoteMember', member: 'kv-3', id: '103' });
  });

  it('notes the successor\'s ID, and the end once it votes', () => {
    const rec: ReplacementRecord = { 'kv-1': { member: 'kv-1', oldId: '101', cause: 'DataLost', detail: 'gone', startedAt: 1 } };
    const o = (learner: boolean) => cluster([member(0), member(1, { id: '555' }), member(2)], [{ id: '100', member: 'kv-0', started: true }, { id: '555', member: 'kv-1', started: true, isLearner: learner }, { id: '102', member: 'kv-2', started: true }]);
    const adding = noteReplacements(rec, o(true))!;
    expect(adding['kv-1']).to.include({ newId: '555' }).and.not.have.property('finishedAt');
    expect(noteReplacements(adding, o(true))).to.equal(adding);
    const done = noteReplacements(adding, o(false))!;
    expect(done['kv-1'].finishedAt).to.equal(5_000);
    expect(replacementUnderWay(done)).to.equal(undefined);
  });

  it('says "failed" with the member\'s own lines outside an upgrade, and upgrade words only during one', () => {
    const dead = member(2, { running: false, healthy: false, leader: false, release: undefined, appliedIndex: undefined, failure: 'exited with code 1 while starting; its last log line: error: listen EADDRINUSE' });
    const outside = plan(spec(), cluster([member(0), member(1), dead]), undefined);
    expect(outside).to.include({ kind: 'blocked', code: 'MemberFailedToStart', condition: 'MemberFailed' });
    const reason = (outside as { reason: string }).reason;
    expect(reason).to.include('member kv-2 is not running (no upgrade under way): exited with code 1 while starting; its last log line: error: listen EADDRINUSE');
    expect(reason).to.not.match(/upgrade resumes|cannot run/);
    const st = computeStatus({ spec: spec(), observed: cluster([member(0), member(1), dead]), pods: new Map(), step: outside, now: new Date(0) });
    expect(st.conditions!.find((c) => c.type === 'UpgradeBlocked')).to.include({ status: 'False' });
    expect(st.conditions!.find((c) => c.type === 'Stalled')).to.include({ status: 'True', reason: 'MemberFailedToStart' });
    // during an upgrade (kv-0 still on 3.4): the upgrade's words
    const during = plan(spec(), cluster([member(0, { release: '3.4.34', configuredVersion: '3.4.34' }), member(1), dead]), undefined);
    expect(during).to.include({ kind: 'blocked', code: 'MemberFailedToStart', condition: 'UpgradeBlocked' });
    expect((during as { reason: string }).reason).to.match(/cannot run 3\.5\.21: .*the upgrade resumes/);
  });

  describe('properties over generated observations', () => {
    const arb = fc.integer({ min: 1, max: 5 }).chain((n) =>
      fc.tuple(
        fc.array(fc.record({ running: fc.constantFrom(true, true, true, false), healthy: fc.constantFrom(true, true, true, false), leader: fc.boolean(), applied: fc.integer({ min: 0, max: 600 }), lost: fc.option(fc.constantFrom<LossCause>('DataLost', 'AlreadyBootstrapped', 'DataCorrupt'), { nil: undefined }), otherId: fc.constantFrom(false, false, false, true), learner: fc.constantFrom(false, false, false, true) }), { minLength: n, maxLength: n }),
        fc.boolean(),
      ),
    ).map(([ms, byLeader]): ObservedCluster => {
      const members = ms.map((r, i) => member(i, {
        running: r.running, healthy: r.healthy && r.running, leader: r.leader && r.running && r.healthy, appliedIndex: r.running ? r.applied : undefined,
        id: r.running ? (r.otherId ? String(900 + i) : String(100 + i)) : undefined, ...(r.lost ? { lost: { cause: r.lost, detail: 'x' } } : {}),
      }));
      const list = ms.map((r, i) => ({ id: String(100 + i), member: `kv-${i}`, started: true, ...(r.learner ? { isLearner: true } : {}) }));
      return cluster(members, list, { clusterMembersByLeader: byLeader, catchUp: { leaderIndex: 600, ratePerSecond: 0 } });
    });

    it('replaces only a lost member (evidence or another ID), only with every other member healthy, one leader, no learner', () => {
      let replaced = 0;
      fc.assert(fc.property(arb, (o) => {
        const step = plan(spec(o.members.length), o, undefined);
        if (step.kind !== 'replaceMember') return;
        replaced++;
        const m = o.members.find((x) => x.name === step.member)!;
        const listed = o.clusterMembers!.find((c) => c.member === m.name)!;
        expect(m.lost !== undefined || (m.id !== undefined && m.id !== listed.id)).to.equal(true);
        expect(step.id).to.equal(listed.id);
        const others = o.members.filter((x) => x !== m);
        expect(others.length).to.be.at.least(1);
        expect(others.every((x) => x.running && x.healthy)).to.equal(true);
        expect(others.filter((x) => x.leader)).to.have.length(1);
        expect(o.clusterMembersByLeader).to.equal(true);
        expect(o.clusterMembers!.filter((c) => c.isLearner && c.member !== m.name)).to.deep.equal([]);
      }), { numRuns: 2000 });
      // the generator reaches replacements (the property is not vacuous)
      expect(replaced).to.be.greaterThan(10);
    });

    it('never replaces a member whose data is intact (no evidence, its own ID)', () => {
      fc.assert(fc.property(arb, (o) => {
        const intact = { ...o, members: o.members.map((m, i) => ({ ...m, lost: undefined, id: m.id === undefined ? undefined : String(100 + i) })) };
        expect(plan(spec(o.members.length), intact, undefined).kind).to.not.equal('replaceMember');
      }), { numRuns: 2000 });
    });
  });
});

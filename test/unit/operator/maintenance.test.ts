// The planner's maintenance (operator/planner/maintenance.ts), pure: NOSPACE relief (compaction keeping the spec's
// retention, every member defragmented with the leader last after MoveLeader, the alarm disarmed only when the data
// fits, else Stalled with the numbers), rounds started by a request, a schedule or a threshold inside the window, the
// record written ahead and a round resumed after a crash at any point (seeded simulations), and spec.maintenance's
// bad input refused naming the field.
import { expect } from 'chai';
import type { SvcClusterSpec } from '../../../operator/api/types.js';
import { specProblems, updateProblems, withDefaults } from '../../../operator/api/validate.js';
import { inWindow, parseWindow, quotaBytes } from '../../../operator/api/maintenance.js';
import { computeStatus, maintenanceStatus } from '../../../operator/controller/status.js';
import { renderView, type ClusterView } from '../../../operator/cli/status-view.js';
import { beginMaintenance, compactRevision, disarmProblem, finishMaintenancePart, noteMaintenance } from '../../../operator/planner/maintenance.js';
import { plan } from '../../../operator/planner/plan.js';
import { describeStep } from '../../../operator/planner/steps.js';
import type { MaintenanceRecord, ObservedCluster, ObservedMember, Step } from '../../../operator/planner/types.js';
import { rng } from '../../../harness/chaos/rng.js';

const V = '3.5.21';
const MiB = 2 ** 20;
const spec = (maintenance?: SvcClusterSpec['maintenance'], replicas = 3): SvcClusterSpec => withDefaults({ version: V, replicas, ...(maintenance ? { maintenance } : {}) });

function member(i: number, over: Partial<ObservedMember> = {}): ObservedMember {
  return {
    name: `kv-${i}`, id: String(100 + i), configuredVersion: V, release: V, clusterVersion: '3.5.0', running: true, healthy: true, leader: i === 0,
    appliedIndex: 500, revision: 900, dbSize: 10 * MiB, dbSizeInUse: 9 * MiB, ...over,
  };
}

function cluster(members: ObservedMember[], extra: Partial<ObservedCluster> = {}): ObservedCluster {
  return {
    now: Date.parse('2026-03-02T03:30:00Z'), members, authEnabled: false, clusterMembers: members.map((m, i) => ({ id: String(100 + i), member: m.name, started: true })),
    clusterMembersByLeader: true, catchUp: { leaderIndex: 500, ratePerSecond: 0 }, maintenance: { created: Date.parse('2026-03-01T00:00:00Z') }, ...extra,
  };
}

const three = (over: Partial<ObservedMember> = {}) => [member(0, over), member(1, over), member(2, over)];
const withRecord = (o: ObservedCluster, record: MaintenanceRecord | undefined): ObservedCluster => ({ ...o, maintenance: { ...o.maintenance!, ...(record ? { record } : {}) } });

describe('operator planner: maintenance (NOSPACE relief, defragmentation rounds)', () => {
  it('NOSPACE: compacts at the leader revision less the retention the spec keeps (none, revision mode; periodic: the members\' own compactor)', () => {
    const o = cluster(three(), { noSpace: ['100'] });
    expect(plan(spec(), o, undefined)).to.deep.include({ kind: 'compact', member: 'kv-0', revision: 900, reason: 'NoSpace' });
    expect(plan(spec({ autoCompaction: { mode: 'revision', retention: '100' } }), o, undefined)).to.deep.include({ kind: 'compact', revision: 800 });
    // periodic: no compaction of the operator's; the round goes on with the first follower
    expect(plan(spec({ autoCompaction: { mode: 'periodic', retention: '1h' } }), o, undefined)).to.deep.include({ kind: 'defragMember', member: 'kv-1', reason: 'NoSpace' });
    expect(compactRevision(spec({ autoCompaction: { mode: 'periodic', retention: '1h' } }), 900, true), 'asked for: up to now').to.equal(900);
    expect(compactRevision(spec({ autoCompaction: { mode: 'revision', retention: '1000' } }), 900), 'nothing older than the retention').to.equal(undefined);
  });

  it('a move-leader request: leadership to the member named through the gate, its token recorded before the move, answered once', () => {
    const s = spec();
    const request = { token: 't-move', action: 'move-leader' as const, member: 'kv-2' };
    const o = cluster(three(), { maintenance: { created: 0, request } });
    const step = plan(s, o, undefined);
    expect(step).to.deep.equal({ kind: 'moveLeader', from: 'kv-0', to: 'kv-2', toId: '102', request: 't-move' });
    const record = beginMaintenance(undefined, step, o);
    expect(record).to.deep.equal({ lastRequest: 't-move' });
    expect(beginMaintenance(record, step, o), 'recorded once').to.equal(record);
    // answered: not again, even once another member leads
    const moved = three().map((m) => ({ ...m, leader: m.name === 'kv-1' }));
    expect(plan(s, cluster(moved, { maintenance: { created: 0, request, record: record! } }), undefined)).to.deep.equal({ kind: 'steady', version: V });
    // not while a member catches up (the gate), nor to a member that does not exist; a move of a round keeps no token
    const behind = three().map((m) => (m.name === 'kv-1' ? { ...m, appliedIndex: 1 } : m));
    expect(plan(s, cluster(behind, { maintenance: { created: 0, request } }), undefined).kind).to.not.equal('moveLeader');
    expect(plan(s, cluster(three(), { maintenance: { created: 0, request: { ...request, member: 'kv-9' } } }), undefined)).to.deep.equal({ kind: 'steady', version: V });
    expect(beginMaintenance(undefined, { kind: 'moveLeader', from: 'kv-0', to: 'kv-1' }, o)).to.equal(undefined);
  });

  it('a round defragments followers in name order, then moves leadership to a member done and defragments the old leader', () => {
    // the files (10 MiB) reached the quota: the alarm went up at it
    const s = spec({ quotaBackendBytes: '11Mi' });
    let record: MaintenanceRecord | undefined;
    let members = three();
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      const o = withRecord(cluster(members, { noSpace: ['100'] }), record);
      const step = plan(s, o, undefined);
      seen.push(step.kind === 'defragMember' ? `defrag ${step.member}` : step.kind === 'moveLeader' ? `move ${step.from}->${step.to}` : step.kind);
      if (step.kind === 'disarmAlarm') {
        // nothing but the round let it go: said so, with the numbers
        expect(step.relief).to.equal('compacted and defragmented; the largest database (kv-0, 4.0 MiB) fits in the quota of 11.0 MiB again');
        break;
      }
      record = beginMaintenance(record, step, o);
      if (step.kind === 'moveLeader') members = members.map((m) => ({ ...m, leader: m.name === step.to }));
      else record = finishMaintenancePart(record!, step, o.now, 4 * MiB);
      if (step.kind === 'defragMember') members = members.map((m) => (m.name === step.member ? { ...m, dbSize: 4 * MiB, dbSizeInUse: 4 * MiB } : m));
    }
    expect(seen).to.deep.equal(['compact', 'defrag kv-1', 'defrag kv-2', 'move kv-0->kv-1', 'defrag kv-0', 'disarmAlarm']);
    expect(record!.round!.defrags['kv-0']).to.include({ before: 10 * MiB, after: 4 * MiB });
    // finished once the alarm is gone
    const done = noteMaintenance(record, cluster(members));
    expect(done!.round!.finishedAt).to.be.a('number');
    expect(noteMaintenance(record, cluster(members, { noSpace: ['100'] }))).to.equal(record);
  });

  it('a 1-member cluster defragments its leader in place (no one to hand leadership to)', () => {
    const o = cluster([member(0)], { noSpace: ['100'] });
    const record = beginMaintenance(undefined, plan(spec(undefined, 1), o, undefined), o);
    const compacted = finishMaintenancePart(record!, { kind: 'compact', member: 'kv-0', revision: 900, reason: 'NoSpace', id: record!.round!.id }, o.now);
    expect(plan(spec(undefined, 1), withRecord(o, compacted), undefined)).to.deep.include({ kind: 'defragMember', member: 'kv-0' });
  });

  it('waits (MaintenanceNotSafe) while a member is down or catching up; nothing is touched', () => {
    const down = plan(spec(), cluster([member(0), member(1), member(2, { healthy: false })], { noSpace: ['100'] }), undefined);
    expect(down).to.deep.include({ kind: 'wait', code: 'MaintenanceNotSafe' });
    expect((down as { reason: string }).reason).to.match(/NOSPACE alarm is raised .* kv-2 not healthy/);
    const behind = plan(spec(), cluster([member(0), member(1), member(2, { appliedIndex: 10 })], { noSpace: ['100'] }), undefined);
    expect((behind as { reason: string }).reason).to.match(/kv-2 is catching up/);
  });

  it('the data still does not fit after the round: Stalled with the numbers and the two ways out; a raised quota restarts the members first', () => {
    const s = spec({ quotaBackendBytes: '12Mi' });
    const round = { id: 'nospace-1', reason: 'NoSpace' as const, startedAt: 1, members: ['kv-0', 'kv-1', 'kv-2'], compactRevision: 900, compacted: true, defrags: Object.fromEntries(['kv-0', 'kv-1', 'kv-2'].map((n) => [n, { begunAt: 1, before: 12 * MiB, finishedAt: 2 }])) };
    const o = withRecord(cluster(three({ dbSize: 11.5 * MiB, dbSizeInUse: 11.5 * MiB }), { noSpace: ['101'] }), { round });
    const step = plan(s, o, undefined);
    expect(step).to.deep.include({ kind: 'blocked', code: 'NoSpaceNotRelieved', condition: 'NoSpace' });
    expect((step as { reason: string }).reason).to.equal('the NOSPACE alarm stays raised: after compaction and defragmentation the database of kv-0 is 11.5 MiB (11.5 MiB in use) against a quota of 12.0 MiB (disarmed only under 90% of it); the data does not fit: raise spec.maintenance.quotaBackendBytes (at most spec.storage.size), or grow spec.storage.size (the derived quota follows), or delete keys; writes are refused until then, reads go on');
    const status = computeStatus({ spec: s, observed: o, pods: new Map(), step, now: new Date(o.now) });
    expect(status.conditions!.find((c) => c.type === 'Stalled')).to.include({ status: 'True', reason: 'NoSpaceNotRelieved' });
    expect(status.conditions!.find((c) => c.type === 'UpgradeBlocked')).to.include({ status: 'False' });
    // fits under a raised quota, but the members still run with the old one: their restart comes first, then the disarm
    const raised = spec({ quotaBackendBytes: '64Mi' });
    const rolling = withRecord(cluster(three({ dbSize: 11.5 * MiB, configRevision: 'old' }), { noSpace: ['101'], revision: { config: 'new' } }), { round });
    expect(plan(raised, rolling, undefined)).to.deep.include({ kind: 'restartMember', member: 'kv-1', reason: 'SpecChange' });
    const restarted = withRecord(cluster(three({ dbSize: 11.5 * MiB, configRevision: 'new' }), { noSpace: ['101'], revision: { config: 'new' } }), { round });
    const disarm = plan(raised, restarted, undefined);
    expect(disarm).to.deep.equal({ kind: 'disarmAlarm', member: 'kv-0', alarm: 'NOSPACE', memberId: '101', relief: 'the quota was raised to 64.0 MiB (compacted and defragmented before, which was not enough); the largest database (kv-0, 11.5 MiB) fits in the quota of 64.0 MiB' });
    // what happened, in hex as etcdctl prints member IDs
    expect(describeStep(disarm)).to.equal('disarm the NOSPACE alarm of member 65 through kv-0: the quota was raised to 64.0 MiB (compacted and defragmented before, which was not enough); the largest database (kv-0, 11.5 MiB) fits in the quota of 64.0 MiB');
    // the other way out, a larger volume (Kubernetes): grown first; the quota is the volumes' until then
    const derived = spec();
    const full = withRecord(cluster(three({ dbSize: 500 * MiB, dbSizeInUse: 500 * MiB }), { noSpace: ['101'], volume: { size: '1Gi', expandable: true, claims: { 'kv-0': '1Gi', 'kv-1': '1Gi', 'kv-2': '1Gi' } } }), { round });
    expect(plan(derived, full, undefined)).to.deep.include({ kind: 'blocked', code: 'NoSpaceNotRelieved' });
    expect(plan({ ...derived, storage: { size: '4Gi' } }, full, undefined)).to.deep.include({ kind: 'expandVolumes', size: '4Gi', members: ['kv-0', 'kv-1', 'kv-2'] });
  });

  it('a steady cluster starts a round for a request, a schedule slot or a threshold, the last two only inside the window', () => {
    const defrag = (d: NonNullable<SvcClusterSpec['maintenance']>['defrag']) => spec({ defrag: d });
    const o = cluster(three());
    expect(plan(spec(), o, undefined)).to.deep.include({ kind: 'steady' });
    // a request: every member, or the one named; a compaction only
    const req = (request: NonNullable<ObservedCluster['maintenance']>['request']) => ({ ...o, maintenance: { ...o.maintenance!, request } });
    expect(plan(spec(), req({ token: 't1', action: 'defrag' }), undefined)).to.deep.equal({ kind: 'defragMember', member: 'kv-1', reason: 'Requested', id: 't1' });
    expect(plan(spec(), req({ token: 't2', action: 'defrag', member: 'kv-0' }), undefined)).to.deep.include({ kind: 'moveLeader', from: 'kv-0', to: 'kv-1' });
    expect(plan(spec(), req({ token: 't3', action: 'compact' }), undefined)).to.deep.equal({ kind: 'compact', member: 'kv-0', revision: 900, reason: 'Requested', id: 't3' });
    const answered = withRecord(req({ token: 't1', action: 'defrag' }), { lastRequest: 't1' });
    expect(plan(spec(), answered, undefined)).to.deep.include({ kind: 'steady' });
    // a schedule: the latest slot since the last one begun (03:00 today), once
    expect(plan(defrag({ schedule: '0 3 * * *' }), o, undefined)).to.deep.equal({ kind: 'defragMember', member: 'kv-1', reason: 'Scheduled', id: '2026-03-02T03:00:00.000Z' });
    expect(plan(defrag({ schedule: '0 3 * * *' }), withRecord(o, { lastSlot: '2026-03-02T03:00:00.000Z' }), undefined)).to.deep.include({ kind: 'steady' });
    // in another time zone 03:00 has not come yet (Tokyo: 12:30 now; slots at 03:00 Tokyo = 18:00 UTC the day before)
    expect(plan(defrag({ schedule: '0 3 * * *', timeZone: 'Asia/Tokyo' }), withRecord(o, { lastSlot: '2026-03-01T18:00:00.000Z' }), undefined)).to.deep.include({ kind: 'steady' });
    // thresholds: 10% unused is under 30%; 90% of a 10 MiB quota that a defragmentation brings under 80%
    expect(plan(defrag({ threshold: { fragmentation: '30%' } }), o, undefined)).to.deep.include({ kind: 'steady' });
    expect(plan(defrag({ threshold: { fragmentation: '10%' } }), o, undefined)).to.deep.include({ kind: 'defragMember', reason: 'Threshold' });
    const q = (d: NonNullable<SvcClusterSpec['maintenance']>['defrag']) => spec({ quotaBackendBytes: '10Mi', defrag: d });
    const full = cluster(three({ dbSize: 9 * MiB, dbSizeInUse: 7 * MiB }));
    expect(plan(q({ threshold: { quotaUsage: '80%' } }), full, undefined)).to.deep.include({ kind: 'defragMember', reason: 'Threshold' });
    const large = cluster(three({ dbSize: 9 * MiB, dbSizeInUse: 8.5 * MiB }));
    expect(plan(q({ threshold: { quotaUsage: '80%' } }), large, undefined), 'a defragmentation would not bring it under').to.deep.include({ kind: 'steady' });
    // the window (03:30 UTC now): 03:00 for 1h is open, 04:00 for 2h is not, 23:00 for 5h wraps midnight and is
    expect(plan(defrag({ threshold: { fragmentation: '10%' }, window: { start: '03:00', duration: '1h' } }), o, undefined)).to.deep.include({ kind: 'defragMember' });
    expect(plan(defrag({ threshold: { fragmentation: '10%' }, window: { start: '04:00', duration: '2h' } }), o, undefined)).to.deep.include({ kind: 'steady' });
    expect(plan(defrag({ threshold: { fragmentation: '10%' }, window: { start: '23:00', duration: '5h' } }), o, undefined)).to.deep.include({ kind: 'defragMember' });
    expect(inWindow(parseWindow({ start: '12:00', duration: '1h' })!, 'Asia/Tokyo', o.now), '12:30 in Tokyo').to.equal(true);
    // nothing is started while an upgrade or a member is down
    expect(plan(defrag({ threshold: { fragmentation: '10%' } }), cluster([member(0), member(1), member(2, { healthy: false })]), undefined)).to.deep.include({ kind: 'wait', code: 'MemberUnhealthy' });
  });

  it('resumes a round from its record after a crash at any point: every member defragmented, the leader last, the alarm disarmed once (seeded)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed);
      const n = r.pick([1, 3, 5]);
      const s = spec(undefined, n);
      const lead = r.int(n);
      let members = Array.from({ length: n }, (_, i) => member(i, { leader: i === lead }));
      let stored: MaintenanceRecord | undefined; // what the runtime holds: a crash loses nothing else
      let alarm = true;
      const order: string[] = [];
      let disarms = 0;
      for (let pass = 0; pass < 60 && (alarm || stored?.round?.finishedAt === undefined); pass++) {
        const o = withRecord(cluster(members, alarm ? { noSpace: ['100'] } : {}), stored);
        const noted = noteMaintenance(stored, o);
        if (noted !== stored) stored = noted;
        const step: Step = plan(s, withRecord(o, stored), undefined);
        if (step.kind === 'steady') break;
        expect(['compact', 'defragMember', 'moveLeader', 'disarmAlarm'], `seed ${seed}: ${JSON.stringify(step)}`).to.include(step.kind);
        stored = beginMaintenance(stored, step, withRecord(o, stored)) ?? stored;
        const crash = r.int(4); // 0: before the act, 1: after the act before its result, 2-3: no crash
        if (crash === 0) continue;
        if (step.kind === 'defragMember') {
          order.push(step.member);
          expect(members.find((m) => m.name === step.member)!.leader && n > 1, `seed ${seed}: a leader defragmented`).to.equal(false);
          members = members.map((m) => (m.name === step.member ? { ...m, dbSize: 2 * MiB, dbSizeInUse: 2 * MiB } : m));
        }
        if (step.kind === 'moveLeader') members = members.map((m) => ({ ...m, leader: m.name === step.to }));
        if (step.kind === 'disarmAlarm') {
          alarm = false;
          disarms++;
        }
        if (crash === 1) continue;
        stored = finishMaintenancePart(stored!, step, 0, 2 * MiB);
      }
      expect(alarm, `seed ${seed}`).to.equal(false);
      expect(disarms, `seed ${seed}`).to.be.at.most(2);
      expect(new Set(order).size, `seed ${seed}: ${order.join(',')}`).to.equal(n);
      const final = noteMaintenance(stored, cluster(members));
      expect(final!.round!.finishedAt, `seed ${seed}`).to.be.a('number');
    }
  });
});

describe('operator planner: a disarm asked for while its cause persists', () => {
  it('refuses NOSPACE while the largest database is over 90% of the quota, CORRUPT while the hashes differ; names the numbers', () => {
    const s = spec({ quotaBackendBytes: '10Mi' });
    expect(disarmProblem(s, cluster(three({ dbSize: 8 * MiB })), 'NOSPACE')).to.equal(undefined);
    expect(disarmProblem(s, cluster([member(0, { dbSize: 4 * MiB }), member(1, { dbSize: 9.5 * MiB, dbSizeInUse: 9.4 * MiB }), member(2, { dbSize: 4 * MiB })]), 'NOSPACE')).to.equal(
      "the NOSPACE alarm's cause persists: the database of kv-1 is 9.5 MiB (9.4 MiB in use) against a quota of 10.0 MiB; disarmed now, the next write raises it again. Compact and defragment first (the operator does so by itself), raise spec.maintenance.quotaBackendBytes, or grow spec.storage.size");
    const corruption = (h2: number) => ({ alarmMemberId: '0', revision: 7, hashes: { 'kv-0': { hash: 1, compactRevision: 0 }, 'kv-1': { hash: 1, compactRevision: 0 }, 'kv-2': { hash: h2, compactRevision: 0 } } });
    expect(disarmProblem(s, cluster(three(), { corruption: corruption(1) }), 'CORRUPT')).to.equal(undefined);
    expect(disarmProblem(s, cluster(three(), { corruption: corruption(5) }), 'CORRUPT')).to.match(/^the CORRUPT alarm's cause persists: the members' KV hashes at revision 7 differ \(kv-0 1, kv-1 1, kv-2 5\)/);
  });
});

describe('operator planner: volumes that grow', () => {
  const grown = (size: string): SvcClusterSpec => ({ ...spec(), storage: { size } });
  it('a larger spec.storage.size: the claims still smaller grown in place, then the template; refused with nothing changed when the class cannot expand', () => {
    const o = (volume: ObservedCluster['volume']) => cluster(three(), { volume });
    expect(plan(grown('1Gi'), o({ size: '1Gi', claims: {} }), undefined)).to.deep.include({ kind: 'steady' });
    expect(plan(grown('2Gi'), o({ size: '1Gi', storageClass: 'fast', expandable: true, claims: { 'kv-0': '1Gi', 'kv-1': '2Gi', 'kv-2': '1Gi' } }), undefined))
      .to.deep.equal({ kind: 'expandVolumes', size: '2Gi', from: '1Gi', members: ['kv-0', 'kv-2'] });
    // the class could not be read: tried (the apiserver refuses a class that cannot expand, and says so)
    expect(plan(grown('2Gi'), o({ size: '1Gi', claims: { 'kv-0': '2Gi', 'kv-1': '2Gi', 'kv-2': '2Gi' } }), undefined)).to.deep.equal({ kind: 'expandVolumes', size: '2Gi', from: '1Gi', members: [] });
    expect(plan(grown('512Mi'), o({ size: '1Gi', claims: {} }), undefined)).to.deep.equal({
      kind: 'blocked', code: 'VolumeShrinkRefused', condition: 'VolumeExpansion',
      reason: "spec.storage.size 512Mi is smaller than the members' volumes (1Gi): volumes do not shrink; nothing was changed; set spec.storage.size to 1Gi or more",
    });
    const refused = plan(grown('2Gi'), o({ size: '1Gi', storageClass: 'local-path', expandable: false, claims: { 'kv-0': '1Gi', 'kv-1': '1Gi', 'kv-2': '1Gi' } }), undefined);
    expect(refused).to.deep.equal({
      kind: 'blocked', code: 'VolumeExpansionNotAllowed', condition: 'VolumeExpansion',
      reason: "spec.storage.size 2Gi is larger than the members' volumes (1Gi), and StorageClass local-path does not allow volume expansion (allowVolumeExpansion is not true): nothing was changed; set spec.storage.size back to 1Gi, or allow expansion on the class (its provisioner must support it)",
    });
  });
});

describe('spec.maintenance: defaults and bad input', () => {
  it('the quota is half the volume, at most 8 GiB, unless given', () => {
    expect(quotaBytes(spec())).to.equal(512 * MiB);
    expect(quotaBytes({ ...spec(), storage: { size: '100Gi' } })).to.equal(8 * 1024 * MiB);
    expect(quotaBytes(spec({ quotaBackendBytes: '100Mi' }))).to.equal(100 * MiB);
  });

  it('refuses what does not parse, a quota larger than the volume and a shrink, naming the field', () => {
    const p = (m: SvcClusterSpec['maintenance'], extra: Partial<SvcClusterSpec> = {}) => specProblems({ ...spec(m), ...extra });
    expect(p({ quotaBackendBytes: '2Gi' })).to.deep.equal(['spec.maintenance.quotaBackendBytes 2Gi is larger than the volume (spec.storage.size 1Gi): the database could not reach it; lower the quota or grow spec.storage.size first']);
    expect(p({ quotaBackendBytes: '2Gi' }, { storage: { size: '4Gi' } })).to.deep.equal([]);
    expect(p({ quotaBackendBytes: 'lots' })).to.deep.equal(['spec.maintenance.quotaBackendBytes "lots" is not a positive quantity (e.g. 2Gi)']);
    expect(p({ defrag: { schedule: 'every night' } })[0]).to.match(/^spec\.maintenance\.defrag\.schedule "every night" is not a cron expression/);
    expect(p({ defrag: { schedule: '0 3 * * *', timeZone: 'Mars/Olympus' } })).to.deep.equal(['spec.maintenance.defrag.timeZone "Mars/Olympus" is not an IANA time zone (e.g. Europe/Berlin)']);
    expect(p({ defrag: { threshold: { fragmentation: 'half' } } })).to.deep.equal(['spec.maintenance.defrag.threshold.fragmentation "half" is not a share (e.g. "40%", more than 0 and at most 100)']);
    expect(p({ defrag: { threshold: { quotaUsage: '120%' } } })).to.deep.equal(['spec.maintenance.defrag.threshold.quotaUsage "120%" is not a share (e.g. "40%", more than 0 and at most 100)']);
    expect(p({ defrag: { threshold: { fragmentation: '40%' }, window: { start: '25:00', duration: '1h' } } })[0]).to.match(/^spec\.maintenance\.defrag\.window .* does not parse/);
    expect(p({ autoCompaction: { mode: 'revision', retention: '1h' } })[0]).to.match(/^spec\.maintenance\.autoCompaction\.retention "1h" does not parse: with mode revision/);
    expect(p({ autoCompaction: { mode: 'periodic', retention: '30m' }, defrag: { schedule: '0 3 * * 0', threshold: { fragmentation: '40%', quotaUsage: '80%' }, window: { start: '02:00', duration: '1h30m' } } })).to.deep.equal([]);
    expect(updateProblems({ ...spec(), storage: { size: '2Gi' } }, { ...spec(), storage: { size: '1Gi' } })).to.deep.equal([
      'spec.storage.size cannot shrink from 2Gi to 1Gi (volumes do not shrink); set it back to 2Gi or more',
    ]);
    expect(updateProblems({ ...spec(), storage: { size: '1Gi' } }, { ...spec(), storage: { size: '2Gi' } })).to.deep.equal([]);
  });

  it('status.maintenance: the quota in effect, the last compaction, each member\'s last defragmentation (kept across rounds); kubectl svc status shows it', () => {
    const t = (min: number) => Date.parse('2026-03-02T03:00:00Z') + min * 60_000;
    const first: MaintenanceRecord = { round: { id: 'r1', reason: 'Scheduled', startedAt: t(0), members: ['kv-0', 'kv-1'], compactRevision: 800, compacted: true, finishedAt: t(5), defrags: { 'kv-0': { begunAt: t(1), finishedAt: t(2), before: 10 * MiB, after: 4 * MiB }, 'kv-1': { begunAt: t(3), finishedAt: t(4), before: 9 * MiB, after: 4 * MiB } } } };
    const s1 = maintenanceStatus(first, undefined, 512 * MiB);
    expect(s1).to.deep.equal({
      quotaBackendBytes: 512 * MiB, lastCompaction: { revision: 800, reason: 'Scheduled', roundStartedAt: '2026-03-02T03:00:00.000Z' },
      members: [{ name: 'kv-0', time: '2026-03-02T03:02:00.000Z', reason: 'Scheduled', before: 10 * MiB, after: 4 * MiB }, { name: 'kv-1', time: '2026-03-02T03:04:00.000Z', reason: 'Scheduled', before: 9 * MiB, after: 4 * MiB }],
    });
    // a later round of kv-1 only, no compaction, one member under way: kv-0 and the compaction as they were
    const second: MaintenanceRecord = { lastRequest: 'x', round: { id: 'x', reason: 'Requested', startedAt: t(10), members: ['kv-1', 'kv-2'], defrags: { 'kv-1': { begunAt: t(11), finishedAt: t(12), before: 5 * MiB, after: 4 * MiB }, 'kv-2': { begunAt: t(13) } } } };
    const s2 = maintenanceStatus(second, s1, 512 * MiB);
    expect(s2.lastCompaction).to.deep.equal(s1.lastCompaction);
    expect(s2.members!.map((m) => `${m.name} ${m.reason}`)).to.deep.equal(['kv-0 Scheduled', 'kv-1 Requested']);
    // computeStatus: the quota the members run with (derived from the volume when the spec names none)
    const o = withRecord(cluster(three()), first);
    const st = computeStatus({ spec: spec(), observed: o, pods: new Map(), step: { kind: 'steady', version: V }, now: new Date(o.now) });
    expect(st.maintenance?.quotaBackendBytes).to.equal(quotaBytes(spec()));
    const view: ClusterView = { namespace: 'ns', name: 'kv', spec: spec(), status: { maintenance: s2 }, members: [], alarms: [], certificates: [], events: [], at: new Date(t(20)) };
    expect(renderView(view)).to.match(/^Maintenance:\s+quota 512 MiB; last compaction to revision 800 \(Scheduled, its round began 20m ago\); last defragmented: kv-0 18m ago \(Scheduled, 10 MiB -> 4\.0 MiB\), kv-1 8m ago \(Requested, 5\.0 MiB -> 4\.0 MiB\)$/m);
  });
});

// The planner's backup step (operator/planner/plan.ts rule 6, backup/schedule.ts dueBackup): a due schedule slot or
// an unanswered request token gives one `backup` from the leader, on a steady cluster only; never while an upgrade,
// a rollout or a scaling is under way (the pre-upgrade backup is the upgrade's own `snapshot` step).
import { expect } from 'chai';
import type { BackupsStatus, SvcClusterSpec } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { plan, type ObservedCluster, type ObservedMember, type UpgradeProgress } from '../../../operator/planner/index.js';

const NOW = Date.parse('2026-03-01T10:00:30Z');
const CREATED = Date.parse('2026-03-01T08:00:00Z');
const spec = (extra: Partial<SvcClusterSpec> = {}): SvcClusterSpec => withDefaults({ version: '3.4.34', replicas: 3, ...extra });
const hourly = (extra: Partial<SvcClusterSpec> = {}) => spec({ backup: { schedule: '0 * * * *', keep: 3 }, ...extra });

function member(i: number, o: Partial<ObservedMember> = {}): ObservedMember {
  return { name: `m${i}`, id: String(100 + i), configuredVersion: '3.4.34', release: '3.4.34', clusterVersion: '3.4.0', running: true, healthy: true, leader: i === 1, appliedIndex: 50, ...o };
}

function observed(o: { record?: BackupsStatus; request?: string; members?: ObservedMember[]; revision?: ObservedCluster['revision'] } = {}): ObservedCluster {
  const members = o.members ?? [member(0), member(1), member(2)];
  return {
    now: NOW,
    members,
    authEnabled: false,
    clusterMembers: members.map((m) => ({ id: m.id!, member: m.name, started: true })),
    clusterMembersByLeader: true,
    ...(o.revision ? { revision: o.revision } : {}),
    backups: { record: o.record, request: o.request, created: CREATED },
  };
}

describe('operator/planner backup step', () => {
  it('takes the latest missed slot of the schedule once, from the leader; then the next slot is not yet due', () => {
    // slots 09:00 and 10:00 passed since the creation at 08:00: one backup, for 10:00 (as a CronJob catches up)
    expect(plan(hourly(), observed(), undefined)).to.deep.equal({ kind: 'backup', reason: 'Scheduled', member: 'm1', id: '2026-03-01T10:00:00.000Z' });
    const taken: BackupsStatus = { claim: 'c', lastScheduleTime: '2026-03-01T10:00:00.000Z' };
    expect(plan(hourly(), observed({ record: taken }), undefined)).to.deep.equal({ kind: 'steady', version: '3.4.34' });
  });

  it('takes no scheduled backup without a schedule, or before the first slot after the creation', () => {
    expect(plan(spec(), observed(), undefined).kind).to.equal('steady');
    const o = observed();
    o.backups!.created = Date.parse('2026-03-01T10:00:10Z');
    expect(plan(hourly(), o, undefined).kind).to.equal('steady');
  });

  it('answers a new request token first (OnDemand), and the same token only once', () => {
    expect(plan(hourly(), observed({ request: 'tok-1' }), undefined)).to.deep.equal({ kind: 'backup', reason: 'OnDemand', member: 'm1', id: 'tok-1' });
    const answered: BackupsStatus = { claim: 'c', lastRequest: 'tok-1', lastScheduleTime: '2026-03-01T10:00:00.000Z' };
    expect(plan(hourly(), observed({ request: 'tok-1', record: answered }), undefined).kind).to.equal('steady');
    expect(plan(spec(), observed({ request: 'tok-2', record: answered }), undefined)).to.include({ kind: 'backup', reason: 'OnDemand', id: 'tok-2' });
  });

  it('a follower down does not hold a backup back (a degraded cluster needs one most); no leader, or nothing due, is a wait', () => {
    const down = member(2, { healthy: false, running: false, release: undefined, clusterVersion: undefined, appliedIndex: undefined });
    expect(plan(hourly(), observed({ members: [member(0), member(1), down] }), undefined)).to.deep.equal({ kind: 'backup', reason: 'Scheduled', member: 'm1', id: '2026-03-01T10:00:00.000Z' });
    expect(plan(spec(), observed({ members: [member(0), member(1), down] }), undefined)).to.include({ kind: 'wait', code: 'MemberUnhealthy' });
    expect(plan(hourly(), observed({ request: 't', members: [member(0), member(1, { leader: false }), member(2)] }), undefined)).to.include({ kind: 'wait', code: 'NoLeader' });
    // a member down in the middle of something is that thing's wait: a restart for an upgrade, a member being added
    const upgrading: UpgradeProgress = { from: '3.3.27', to: '3.4.34', step: 'restartMember', startedAt: 1, restarts: { m2: 1 }, membersDone: ['m0'], snapshot: { location: '/s', member: 'm1', revision: 1, size: 1, sha256: 'x', time: 't' } };
    expect(plan(hourly(), observed({ request: 't', members: [member(0), member(1), down] }), upgrading).kind).to.equal('wait');
    const adding = observed({ request: 't', members: [member(0), member(1), member(2), member(3, { healthy: false, release: undefined, appliedIndex: undefined })] });
    expect(plan(hourly({ replicas: 5 }), adding, undefined).kind).to.equal('wait');
  });

  it('a follower catching up does not hold a backup back (it reads the leader only)', () => {
    const o = observed({ members: [member(0, { appliedIndex: 1 }), member(1, { appliedIndex: 5000 }), member(2)] });
    expect(plan(hourly(), o, undefined)).to.include({ kind: 'backup', reason: 'Scheduled' });
  });

  it('is never planned while an upgrade is under way: the upgrade goes on (its snapshot is the pre-upgrade backup)', () => {
    const up = hourly({ version: '3.5.21' });
    expect(plan(up, observed({ request: 't' }), undefined)).to.include({ kind: 'snapshot', member: 'm1', to: '3.5.21' });
    // every member on the target but the upgrade not yet verified complete: complete first
    const progress: UpgradeProgress = { from: '3.4.34', to: '3.4.34', step: 'restartMember', startedAt: 1, restarts: {}, membersDone: ['m0', 'm1', 'm2'], snapshot: { location: '/s', member: 'm1', revision: 1, size: 1, sha256: 'x', time: 't' } };
    expect(plan(hourly(), observed({ request: 't' }), progress).kind).to.equal('complete');
  });

  it('is never planned while a rollout or a scaling is under way', () => {
    const stale = observed({ request: 't', revision: { config: 'new' }, members: [member(0, { configRevision: 'old' }), member(1, { configRevision: 'new' }), member(2, { configRevision: 'new' })] });
    expect(plan(hourly(), stale, undefined)).to.include({ kind: 'restartMember', member: 'm0', reason: 'SpecChange' });
    expect(plan(hourly({ replicas: 5 }), observed({ request: 't' }), undefined)).to.include({ kind: 'addMember', member: 'm3' });
    // a member added and not yet started: the scaling is finished first
    const o = observed({ request: 't' });
    o.clusterMembers!.push({ id: '103', member: 'm3', started: false });
    expect(plan(hourly({ replicas: 4 }), o, undefined)).to.include({ kind: 'startMember', member: 'm3' });
  });
  it('continuous backup\'s agent moves to a changed destination before a pending backup is taken (one failing there must not keep it on the old one)', () => {
    const o = { ...observed({ request: 'tok-1' }), agent: { running: true, current: 'old endpoint', wanted: 'new endpoint' } };
    expect(plan(hourly(), o, undefined)).to.deep.equal({ kind: 'startBackupAgent', reason: 'ConfigChanged' });
    // once it runs on the new one, the request is answered
    expect(plan(hourly(), { ...o, agent: { running: true, current: 'new endpoint', wanted: 'new endpoint' } }, undefined)).to.include({ kind: 'backup', reason: 'OnDemand', id: 'tok-1' });
  });
});

// Restore drills' pure rules (operator/backup/verify.ts) and the planner's verifyBackup step: when a drill is due
// (a request first, then the latest spec.backup.verify slot, only once a backup exists, only on a runtime that runs
// drills), which backup it restores, how the outcome is judged and recorded; the controller's BackupVerified
// condition and the drill metrics.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { UpgradeMetrics } from '../../../operator/controller/metrics.js';
import { computeStatus } from '../../../operator/controller/status.js';
import type { BackupEntry, BackupsStatus, SvcClusterSpec } from '../../../operator/api/types.js';
import { parseSvcCluster, withDefaults } from '../../../operator/api/validate.js';
import { backupsState, msUntilNext } from '../../../operator/backup/schedule.js';
import { backupVerifiedState, combineDrills, dueVerify, judgeChain, judgeDrill, newestBackup, noBackupToVerify } from '../../../operator/backup/verify.js';
import { plan, type ObservedCluster, type ObservedMember } from '../../../operator/planner/index.js';

const NOW = new Date('2026-03-01T10:00:30Z');
const CREATED = new Date('2026-03-01T08:00:00Z');
const spec = (verify?: string): SvcClusterSpec => withDefaults({ version: '3.4.34', replicas: 3, backup: { keep: 3, ...(verify ? { verify: { schedule: verify } } : {}) } });
const entry = (time: string, o: Partial<BackupEntry> = {}): BackupEntry => ({ kind: 'scheduled', location: `/b/${time}.db`, member: 'm1', revision: 40, size: 10, sha256: 'ab', time, kvHash: 1234, compactRevision: 0, ...o });
const withItems: BackupsStatus = { claim: 'c', items: [entry('2026-03-01T09:00:00.000Z', { revision: 30 }), entry('2026-03-01T09:30:00.000Z')] };

function member(i: number): ObservedMember {
  return { name: `m${i}`, id: String(100 + i), configuredVersion: '3.4.34', release: '3.4.34', clusterVersion: '3.4.0', running: true, healthy: true, leader: i === 1, appliedIndex: 50 };
}
function observed(record: BackupsStatus | undefined, o: { verifies?: boolean; verifyRequest?: string } = {}): ObservedCluster {
  const members = [member(0), member(1), member(2)];
  return {
    now: NOW.getTime(), members, authEnabled: false,
    clusterMembers: members.map((m) => ({ id: m.id!, member: m.name, started: true })), clusterMembersByLeader: true,
    backups: { record, created: CREATED.getTime(), verifies: o.verifies ?? true, ...(o.verifyRequest ? { verifyRequest: o.verifyRequest } : {}) },
  };
}

describe('operator/backup restore drills (verify.ts)', () => {
  it('a drill is due at the latest missed slot once a backup exists; a request first; none without a schedule', () => {
    expect(dueVerify({ spec: spec('0 * * * *'), backups: withItems, created: CREATED, now: NOW })).to.deep.equal({ kind: 'scheduled', slot: new Date('2026-03-01T10:00:00Z') });
    // no backup yet: the slot waits (a drill of nothing would only fail)
    expect(dueVerify({ spec: spec('0 * * * *'), backups: { claim: 'c' }, created: CREATED, now: NOW })).to.equal(undefined);
    // the slot answered: not due again until the next one
    expect(dueVerify({ spec: spec('0 * * * *'), backups: { ...withItems, lastVerifyScheduleTime: '2026-03-01T10:00:00.000Z' }, created: CREATED, now: NOW })).to.equal(undefined);
    // a drill that finished after the 10:00 slot (an on-demand one, or a long one): that slot gives none
    const ran = judgeDrill(withItems.items![1], { hash: 1234, compactRevision: 0 }, new Date('2026-03-01T10:00:10Z'));
    expect(dueVerify({ spec: spec('0 * * * *'), backups: { ...withItems, lastVerifyScheduleTime: '2026-03-01T09:00:00.000Z', lastVerified: ran }, created: CREATED, now: NOW })).to.equal(undefined);
    expect(dueVerify({ spec: spec('* * * * * *'), backups: { ...withItems, lastVerified: ran }, created: CREATED, now: NOW })).to.deep.equal({ kind: 'scheduled', slot: new Date('2026-03-01T10:00:30Z') });
    expect(dueVerify({ spec: spec(), backups: withItems, created: CREATED, now: NOW })).to.equal(undefined);
    // a request is answered even without a backup, and once
    expect(dueVerify({ spec: spec(), request: 't1', backups: { claim: 'c' }, created: CREATED, now: NOW })).to.deep.equal({ kind: 'on-demand', token: 't1' });
    expect(dueVerify({ spec: spec(), request: 't1', backups: { claim: 'c', lastVerifyRequest: 't1' }, created: CREATED, now: NOW })).to.equal(undefined);
  });

  it('restores the newest backup kept', () => {
    expect(newestBackup(withItems)!.time).to.equal('2026-03-01T09:30:00.000Z');
    expect(newestBackup({ claim: 'c', items: [...withItems.items!].reverse() })!.time).to.equal('2026-03-01T09:30:00.000Z');
    expect(newestBackup({ claim: 'c' })).to.equal(undefined);
  });

  it('judges a delta chain: the replayed keyspace hashing as the cluster\'s passes; another hash or a broken segment fails; a cluster compacted past it is not compared, and says so', () => {
    const m = { location: 's3://b/p/kv/full/x.db', base: 10, end: 90, segments: 4 };
    const h = { hash: 'ab'.repeat(32), keys: 7 };
    expect(judgeChain({ ...m, replayed: h, cluster: h }, NOW)).to.deep.equal({ time: NOW.toISOString(), location: m.location, revision: 90, result: 'Passed', message: 'replaying 4 delta segment(s) of s3://b/p/kv/full/x.db from revision 10 to 90: the keyspace at 90 (7 key(s)) hashes abababababababab, as the cluster\'s' });
    expect(judgeChain({ ...m, replayed: h, cluster: { hash: 'cd'.repeat(32), keys: 8 } }, NOW)).to.deep.include({ result: 'Failed', message: 'replaying 4 delta segment(s) of s3://b/p/kv/full/x.db from revision 10 to 90: the keyspace at 90 (7 key(s)) hashes abababababababab, the cluster\'s (8 key(s)) cdcdcdcdcdcdcdcd: the segments do not hold the changes the cluster made; a new full snapshot (an on-demand backup) is a restore point that does not need them' });
    expect(judgeChain({ ...m, error: 'destination "d": p/kv/delta/delta-1.jsonl: sha256 mismatch' }, NOW)).to.deep.include({ result: 'Failed', message: 'replaying 4 delta segment(s) of s3://b/p/kv/full/x.db from revision 10 to 90 failed: destination "d": p/kv/delta/delta-1.jsonl: sha256 mismatch' });
    expect(judgeChain({ ...m, replayed: h, cluster: { unknown: 'the cluster has compacted its history past revision 90' } }, NOW)).to.deep.include({ result: 'Passed', message: 'replaying 4 delta segment(s) of s3://b/p/kv/full/x.db from revision 10 to 90: the keyspace at 90 (7 key(s)) hashes abababababababab; not compared: the cluster has compacted its history past revision 90' });
  });

  it('judges: the same hash over the same compaction passes; another hash, compaction, a failed restore or no backup fail, each saying why', () => {
    const b = entry('2026-03-01T09:30:00.000Z');
    expect(judgeDrill(b, { hash: 1234, compactRevision: 0 }, NOW)).to.deep.include({ result: 'Passed', revision: 40, location: b.location, time: NOW.toISOString() });
    const other = judgeDrill(b, { hash: 99, compactRevision: 0 }, NOW);
    expect(other.result).to.equal('Failed');
    expect(other.message).to.match(/KV hash at revision 40 .* is 99, the cluster's was 1234/);
    expect(judgeDrill(b, { hash: 1234, compactRevision: 7 }, NOW).message).to.match(/compacted at revision 7, the cluster was at 0/);
    expect(judgeDrill(b, { error: 'sha256 mismatch' }, NOW)).to.deep.include({ result: 'Failed', message: `restoring ${b.location} failed: sha256 mismatch` });
    expect(judgeDrill(b, {}, NOW).result).to.equal('Failed');
    // recorded by an older release without a hash: the restore is what was checked, and it says so
    const old = judgeDrill({ ...b, kvHash: undefined, compactRevision: undefined }, { hash: 5, compactRevision: 0 }, NOW);
    expect(old.result).to.equal('Passed');
    expect(old.message).to.include('not compared');
    expect(noBackupToVerify(NOW)).to.deep.include({ result: 'Failed', revision: 0 });
  });

  it('records the outcome, the slot or request answered and the next slot; a backup recorded later keeps them', () => {
    const s = spec('30 * * * *');
    const outcome = judgeDrill(withItems.items![1], { hash: 1234, compactRevision: 0 }, NOW);
    const r1 = backupsState({ name: 'kv', spec: s, previous: withItems, verified: { outcome, done: { kind: 'scheduled', slot: new Date('2026-03-01T09:30:00Z') } }, created: CREATED, now: NOW });
    expect(r1).to.deep.include({ lastVerified: outcome, lastVerifyScheduleTime: '2026-03-01T09:30:00.000Z', nextVerifyTime: '2026-03-01T10:30:00.000Z' });
    const r2 = backupsState({ name: 'kv', spec: s, previous: r1, verified: { outcome, done: { kind: 'on-demand', token: 'tok' } }, created: CREATED, now: NOW });
    expect(r2).to.deep.include({ lastVerifyScheduleTime: '2026-03-01T09:30:00.000Z', lastVerifyRequest: 'tok' });
    const r3 = backupsState({ name: 'kv', spec: s, previous: r2, taken: entry('2026-03-01T10:00:10.000Z'), created: CREATED, now: NOW });
    expect(r3).to.deep.include({ lastVerified: outcome, lastVerifyRequest: 'tok', nextVerifyTime: '2026-03-01T10:30:00.000Z' });
    // the controller looks again by the sooner of the next backup and the next drill
    expect(msUntilNext({ claim: 'c', nextScheduleTime: '2026-03-01T11:00:00.000Z', nextVerifyTime: '2026-03-01T10:30:00.000Z' }, NOW)).to.equal(29.5 * 60_000);
  });

  it('drills of several backups (the claim\'s and each bucket\'s newest): Passed only when all passed, the failures named first', () => {
    const at = (location: string, result: 'Passed' | 'Failed') => ({ time: '2026-11-27T00:00:00.000Z', location, revision: 7, result, message: `${location} ${result}` });
    expect(combineDrills([at('a', 'Passed')])).to.deep.equal(at('a', 'Passed'));
    expect(combineDrills([at('a', 'Passed'), at('b', 'Passed')])).to.include({ result: 'Passed', location: 'a', message: 'a Passed; b Passed' });
    expect(combineDrills([at('a', 'Passed'), at('b', 'Failed')])).to.include({ result: 'Failed', location: 'b', message: 'b Failed; a Passed' });
  });

  it('BackupVerified: none before the first drill; True DrillPassed or False DrillFailed with the message', () => {
    expect(backupVerifiedState(withItems)).to.equal(undefined);
    const failed = judgeDrill(withItems.items![1], { hash: 1, compactRevision: 0 }, NOW);
    expect(backupVerifiedState({ ...withItems, lastVerified: failed })).to.deep.include({ ok: false, reason: 'DrillFailed' });
    expect(backupVerifiedState({ ...withItems, lastVerified: { ...failed, result: 'Passed' } })).to.deep.include({ ok: true, reason: 'DrillPassed' });
  });

  it('validation refuses a verify schedule croner cannot read, naming the field', () => {
    const doc = (verify: unknown) => ({ apiVersion: 'svc.dev/v1alpha1', kind: 'SvcCluster', metadata: { name: 'kv' }, spec: { version: '3.4.34', replicas: 1, backup: { verify } } });
    expect(() => parseSvcCluster(doc({ schedule: 'every day' }))).to.throw(/spec\.backup\.verify\.schedule "every day" is not a cron expression/);
    expect(() => parseSvcCluster(doc({}))).to.throw(/spec\.backup\.verify\.schedule must be a string/);
    expect(parseSvcCluster(doc({ schedule: '30 3 * * *' })).spec.backup!.verify).to.deep.equal({ schedule: '30 3 * * *' });
  });
});

describe('operator/planner verifyBackup step', () => {
  it('a steady cluster runs the due drill of its newest backup; a due backup goes first', () => {
    expect(plan(spec('0 * * * *'), observed(withItems), undefined)).to.deep.equal({ kind: 'verifyBackup', reason: 'Scheduled', id: '2026-03-01T10:00:00.000Z', backup: withItems.items![1] });
    const both = withDefaults({ ...spec('0 * * * *'), backup: { keep: 3, schedule: '0 * * * *', verify: { schedule: '0 * * * *' } } });
    expect(plan(both, observed(withItems), undefined).kind).to.equal('backup');
  });

  it('a request without a backup is answered (by a failed drill); a runtime without drills plans none', () => {
    expect(plan(spec(), observed({ claim: 'c' }, { verifyRequest: 't9' }), undefined)).to.deep.equal({ kind: 'verifyBackup', reason: 'OnDemand', id: 't9' });
    expect(plan(spec('0 * * * *'), observed(withItems, { verifies: false }), undefined)).to.deep.equal({ kind: 'steady', version: '3.4.34' });
  });
});

describe('operator controller: a restore drill in status and metrics', () => {
  const members: ObservedMember[] = [member(0), member(1), member(2)];
  const statusWith = (backups: BackupsStatus) => computeStatus({
    generation: 1, spec: spec('0 3 * * *'), observed: { now: NOW.getTime(), members }, backups,
    pods: new Map(members.map((m) => [m.name, { image: 'svc:v3.4.34', ready: true }])),
    step: { kind: 'steady', version: '3.4.34' }, now: NOW,
  });

  it('BackupVerified follows the last drill; a failed drill leaves the cluster Ready (it touches no member)', () => {
    expect(statusWith(withItems).conditions!.some((c) => c.type === 'BackupVerified')).to.equal(false);
    const failed = judgeDrill(withItems.items![1], { hash: 1, compactRevision: 0 }, NOW);
    const s = statusWith({ ...withItems, lastVerified: failed });
    expect(s.conditions!.find((c) => c.type === 'BackupVerified')).to.include({ status: 'False', reason: 'DrillFailed' });
    expect(s.conditions!.find((c) => c.type === 'BackupVerified')!.message).to.include('the cluster\'s was 1234');
    expect(s.conditions!.find((c) => c.type === 'Ready')!.status).to.equal('True');
    expect(s.backups!.lastVerified).to.deep.equal(failed);
  });

  it('svc_operator_backup_verify_failing is 1 after a failed drill, 0 after a passed one; the time of the last drill; gone with the cluster', async () => {
    const registry = new Registry();
    const m = new UpgradeMetrics(registry);
    m.verified('ns', 'kv', undefined);
    expect(await registry.metrics()).to.not.contain('svc_operator_backup_verify_failing{');
    m.verified('ns', 'kv', judgeDrill(withItems.items![1], { error: 'sha256 mismatch' }, NOW));
    let text = await registry.metrics();
    expect(text).to.contain('svc_operator_backup_verify_failing{namespace="ns",cluster="kv"} 1');
    expect(text).to.contain(`svc_operator_backup_last_verified_timestamp_seconds{namespace="ns",cluster="kv"} ${NOW.getTime() / 1000}`);
    m.verified('ns', 'kv', judgeDrill(withItems.items![1], { hash: 1234, compactRevision: 0 }, NOW));
    expect(await registry.metrics()).to.contain('svc_operator_backup_verify_failing{namespace="ns",cluster="kv"} 0');
    m.forget('ns', 'kv');
    text = await registry.metrics();
    expect(text).to.not.contain('svc_operator_backup_verify_failing{');
  });
});

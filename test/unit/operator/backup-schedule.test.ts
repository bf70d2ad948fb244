// The pure rules of scheduled, on-demand and pre-upgrade backups on fixed clocks: cron validation, what is due,
// the record in status.backups (retention by keep), the Job deadline from the database size, BackupReady.
import { expect } from 'chai';
import type { BackupEntry, SvcClusterSpec } from '../../../operator/api/types.js';
import { specProblems } from '../../../operator/api/validate.js';
import { scheduleProblem } from '../../../operator/api/cron.js';
import {
  backupClaimName, backupReadyState, backupsState, dueBackup, dueSlot, jobDeadlineSeconds, JOB_DEADLINE, retain,
} from '../../../operator/backup/schedule.js';
import { quantityBytes } from '../../../operator/api/quantity.js';
import { computeStatus } from '../../../operator/controller/status.js';

const T = (s: string) => new Date(`2026-01-01T${s}Z`);
const created = T('00:00:30');
const spec = (backup: SvcClusterSpec['backup'] = {}): SvcClusterSpec => ({ version: '3.5.21', replicas: 3, backup });
const entry = (time: string, kind: BackupEntry['kind'] = 'scheduled'): BackupEntry =>
  ({ kind, location: `pvc://kv-backups/ns/kv/kv-0-${kind}-${time}.db`, member: 'kv-0', revision: 5, size: 100, sha256: 'a'.repeat(64), time: `2026-01-01T${time}Z` });

describe('operator backups: schedule, retention, deadline (fixed clocks)', () => {
  it('refuses a bad cron expression or time zone with a clear message, also through spec validation', () => {
    expect(scheduleProblem('*/5 * * * *')).to.equal(undefined);
    expect(scheduleProblem('0 3 * * 1-5', 'Europe/Berlin')).to.equal(undefined);
    expect(scheduleProblem('61 * * * *')).to.match(/^spec\.backup\.schedule "61 \* \* \* \*" is not a cron expression .*minute/);
    expect(scheduleProblem('every day')).to.match(/is not a cron expression/);
    expect(scheduleProblem('* * * *')).to.match(/is not a cron expression/);
    expect(scheduleProblem('0 3 * * *', 'Mars/Olympus')).to.equal('spec.backup.timeZone "Mars/Olympus" is not an IANA time zone (e.g. Europe/Berlin)');
    expect(specProblems(spec({ schedule: '99 * * * *' }))).to.have.length(1);
    expect(specProblems(spec({ schedule: '0 * * * *', keep: 2, size: '2Gi' }))).to.deep.equal([]);
    expect(specProblems(spec({ size: 'lots' }))).to.deep.equal(['spec.backup.size "lots" is not a quantity (e.g. 5Gi)']);
  });

  it('a slot is due once it has passed; missed slots give one backup, for the latest slot', () => {
    expect(dueSlot('*/5 * * * *', undefined, created, T('00:04:59'))).to.equal(undefined);
    expect(dueSlot('*/5 * * * *', undefined, created, T('00:05:00'))).to.deep.equal(T('00:05:00'));
    expect(dueSlot('*/5 * * * *', undefined, created, T('00:23:10'))).to.deep.equal(T('00:20:00'));
    expect(dueSlot('*/5 * * * *', undefined, T('00:20:00'), T('00:23:10'))).to.equal(undefined);
    // a time zone moves the slot: 03:00 in Berlin is 02:00 UTC in winter
    expect(dueSlot('0 3 * * *', 'Europe/Berlin', created, T('01:59:59'))).to.equal(undefined);
    expect(dueSlot('0 3 * * *', 'Europe/Berlin', created, T('02:00:00'))).to.deep.equal(T('02:00:00'));
  });

  it('an on-demand request is due until status records its token; the schedule counts from the last slot taken', () => {
    const s = spec({ schedule: '*/5 * * * *' });
    expect(dueBackup({ spec: s, created, now: T('00:03:00') })).to.equal(undefined);
    expect(dueBackup({ spec: s, created, now: T('00:03:00'), request: 'r1' })).to.deep.equal({ kind: 'on-demand', token: 'r1' });
    expect(dueBackup({ spec: s, created, now: T('00:03:00'), request: 'r1', backups: { claim: 'c', lastRequest: 'r1' } })).to.equal(undefined);
    expect(dueBackup({ spec: s, created, now: T('00:06:00'), backups: { claim: 'c', lastRequest: 'r1' }, request: 'r1' })).to.deep.equal({ kind: 'scheduled', slot: T('00:05:00') });
    expect(dueBackup({ spec: s, created, now: T('00:06:00'), backups: { claim: 'c', lastScheduleTime: T('00:05:00').toISOString() } })).to.equal(undefined);
    // no schedule, or a bad one: nothing scheduled
    expect(dueBackup({ spec: spec(), created, now: T('09:00:00') })).to.equal(undefined);
    expect(dueBackup({ spec: spec({ schedule: 'nope' }), created, now: T('09:00:00') })).to.equal(undefined);
  });

  it('status.backups: the claim, entries oldest first within keep, the pre-upgrade snapshot joined once, the next slot', () => {
    expect(backupClaimName('kv', spec())).to.equal('kv-backups');
    expect(backupClaimName('kv', spec({ pvc: 'mine' }))).to.equal('mine');
    const s = spec({ schedule: '*/5 * * * *', keep: 2 });
    let st = backupsState({ name: 'kv', spec: s, created, now: T('00:01:00') });
    expect(st).to.deep.equal({ claim: 'kv-backups', nextScheduleTime: '2026-01-01T00:05:00.000Z' });
    st = backupsState({ name: 'kv', spec: s, previous: st, created, now: T('00:05:03'), taken: entry('00:05:01'), done: { kind: 'scheduled', slot: T('00:05:00') } });
    expect(st).to.deep.include({ lastScheduleTime: '2026-01-01T00:05:00.000Z', nextScheduleTime: '2026-01-01T00:10:00.000Z' });
    st = backupsState({ name: 'kv', spec: s, previous: st, created, now: T('00:07:00'), taken: entry('00:07:00', 'on-demand'), done: { kind: 'on-demand', token: 't' } });
    expect(st.lastRequest).to.equal('t');
    st = backupsState({ name: 'kv', spec: s, previous: st, created, now: T('00:10:02'), taken: entry('00:10:01'), done: { kind: 'scheduled', slot: T('00:10:00') } });
    // keep 2: the oldest entry goes (the Job removed its file)
    expect(st.items!.map((x) => x.time)).to.deep.equal(['2026-01-01T00:07:00Z', '2026-01-01T00:10:01Z']);
    // a pre-upgrade snapshot newer than the kept ones joins; one older than all of them (pruned) does not come back
    const pre = { ...entry('00:11:00', 'pre-upgrade') } as Omit<BackupEntry, 'kind'> & { kind?: string };
    delete pre.kind;
    const withPre = backupsState({ name: 'kv', spec: s, previous: st, preUpgrade: pre, created, now: T('00:11:05') });
    expect(withPre.items!.map((x) => x.kind)).to.deep.equal(['scheduled', 'pre-upgrade']);
    expect(backupsState({ name: 'kv', spec: s, previous: withPre, preUpgrade: pre, created, now: T('00:12:00') }).items).to.deep.equal(withPre.items);
    const old = { ...pre, location: 'pvc://x/old.db', time: '2026-01-01T00:00:40Z' };
    expect(backupsState({ name: 'kv', spec: s, previous: st, preUpgrade: old, created, now: T('00:12:00') }).items).to.deep.equal(st.items);
    expect(retain([entry('00:02:00'), entry('00:01:00'), entry('00:02:00')], 5).map((x) => x.time)).to.deep.equal(['2026-01-01T00:01:00Z', '2026-01-01T00:02:00Z']);
  });

  it('a Job\'s deadline follows the database size: 120 s + bytes at 4 MiB/s, floor 120 s, cap 6 h', () => {
    expect(jobDeadlineSeconds(undefined)).to.equal(120);
    expect(jobDeadlineSeconds(0)).to.equal(120);
    expect(jobDeadlineSeconds(20 * 2 ** 20)).to.equal(125);
    expect(jobDeadlineSeconds(8 * 2 ** 30)).to.equal(120 + 2048);
    expect(jobDeadlineSeconds(10 * 2 ** 40)).to.equal(JOB_DEADLINE.maxSeconds);
    expect(quantityBytes('1Gi')).to.equal(2 ** 30);
    expect(quantityBytes('500M')).to.equal(5e8);
    expect(quantityBytes('1.5Ki')).to.equal(1536);
    expect(quantityBytes('12')).to.equal(12);
    expect(quantityBytes('x')).to.equal(undefined);
  });

  it('BackupReady names where the newest backup is; without one, where backups will go', () => {
    expect(backupReadyState({ claim: 'kv-backups' }, undefined)).to.deep.equal({ ok: false, reason: 'NoSnapshot', message: 'no backup taken yet; backups go to claim kv-backups' });
    const st = { claim: 'kv-backups', items: [entry('00:05:00'), entry('00:06:00', 'on-demand')] };
    expect(backupReadyState(st, undefined)).to.include({ ok: true, reason: 'SnapshotTaken' });
    expect(backupReadyState(st, undefined).message).to.equal('newest backup (on-demand, 2026-01-01T00:06:00Z) at pvc://kv-backups/ns/kv/kv-0-on-demand-00:06:00.db; 2 kept on claim kv-backups');
    const members = [{ name: 'kv-0', configuredVersion: '3.5.21', running: true, release: '3.5.21', healthy: true, leader: true }];
    const status = computeStatus({ spec: spec(), observed: { now: 0, members }, pods: new Map(), step: { kind: 'steady', version: '3.5.21' }, now: T('00:07:00'), backups: st });
    expect(status.backups).to.deep.equal(st);
    expect(status.conditions!.find((c) => c.type === 'BackupReady')).to.include({ status: 'True', reason: 'SnapshotTaken' });
  });
});

// The controller's scheduled and on-demand backups on a fixed clock, with a fake Job runner: a running Job is a
// requeue announced once, a finished one an entry in status.backups and a BackupTaken Event, a failure a Warning
// and a retry a minute later; a steady cluster is requeued at its next slot.
import { expect } from 'chai';
import type { BackupEntry, SvcClusterSpec } from '../../../operator/api/types.js';
import { BACKUP_RETRY_MS, BackupTracker, type BackupRunInput } from '../../../operator/backup/tracker.js';
import { JobFailure, type ClusterJobs } from '../../../operator/runtime/kubernetes/backup-job.js';
import { StepPending } from '../../../operator/runtime/runtime.js';

const T = (s: string) => new Date(`2026-01-01T${s}Z`);

/** A Job runner whose next answers are scripted: 'pending', 'fail' or 'done'. */
function fakeJobs(script: Array<'pending' | 'fail' | 'done'>): { jobs: ClusterJobs; calls: Array<{ kind: string; member: string; id: string }> } {
  const calls: Array<{ kind: string; member: string; id: string }> = [];
  const jobs = {
    takeBackup: async (kind: 'scheduled' | 'on-demand', member: string, id: string, now: Date): Promise<BackupEntry> => {
      calls.push({ kind, member, id });
      const next = script.shift();
      if (next === 'pending') throw new StepPending('BackupRunning', 'Job running', 1000);
      if (next === 'fail') throw new JobFailure('BackupJobFailed', 'Job ns/kv-sched-x failed: no space left on device');
      return { kind, location: `pvc://kv-backups/ns/kv/${member}-${kind}-${now.toISOString()}.db`, member, revision: 9, size: 10, sha256: 'b'.repeat(64), time: now.toISOString() };
    },
  } as unknown as ClusterJobs;
  return { jobs, calls };
}

function input(jobs: ClusterJobs, now: Date, over: Partial<BackupRunInput> = {}): BackupRunInput {
  const spec: SvcClusterSpec = { version: '3.5.21', replicas: 3, backup: { schedule: '*/10 * * * *', keep: 2 } };
  return {
    key: 'ns/kv', name: 'kv', spec, jobs, created: T('00:00:00'), now, dbBytes: async () => 1000,
    observed: { now: now.getTime(), members: ['kv-0', 'kv-1', 'kv-2'].map((n) => ({ name: n, configuredVersion: '3.5.21', running: true, healthy: true, leader: n === 'kv-1' })) },
    ...over,
  };
}

describe('operator backups: the controller\'s scheduled and on-demand backups (fake Jobs, fixed clock)', () => {
  it('nothing due: requeued at the next slot; due: the leader\'s backup, announced once while it runs, then recorded', async () => {
    const t = new BackupTracker();
    const { jobs, calls } = fakeJobs(['pending', 'pending', 'done']);
    expect(await t.run(input(jobs, T('00:04:00')))).to.deep.equal({ requeueMs: 6 * 60_000 });
    expect(calls).to.deep.equal([]);
    const first = await t.run(input(jobs, T('00:10:05')));
    expect(first.event).to.deep.include({ type: 'Normal', reason: 'BackupStarted' });
    expect(first.requeueMs).to.equal(1000);
    expect(await t.run(input(jobs, T('00:10:06')))).to.deep.equal({ requeueMs: 1000 });
    const done = await t.run(input(jobs, T('00:10:07')));
    expect(done.event).to.deep.include({ type: 'Normal', reason: 'BackupTaken' });
    expect(calls.map((c) => `${c.kind} ${c.member} ${c.id}`)).to.deep.equal(Array(3).fill('scheduled kv-1 2026-01-01T00:10:00.000Z'));
    const st = t.state(input(jobs, T('00:10:08')));
    expect(st).to.deep.include({ claim: 'kv-backups', lastScheduleTime: '2026-01-01T00:10:00.000Z', nextScheduleTime: '2026-01-01T00:20:00.000Z' });
    expect(st.items!.map((x) => x.kind)).to.deep.equal(['scheduled']);
    // nothing more is due until the next slot
    expect(await t.run(input(jobs, T('00:10:08')))).to.deep.equal({ requeueMs: 9 * 60_000 + 52_000 });
  });

  it('an on-demand request goes first and is recorded by its token; a stored status the informer has not caught up with loses nothing', async () => {
    const t = new BackupTracker();
    const { jobs, calls } = fakeJobs(['done', 'done']);
    const r = await t.run(input(jobs, T('00:03:00'), { request: 'tok-1' }));
    expect(r.event?.reason).to.equal('BackupTaken');
    // the informer still shows the old status (no lastRequest): the request is not taken twice
    expect(await t.run(input(jobs, T('00:03:01'), { request: 'tok-1', stored: { claim: 'kv-backups' } }))).to.deep.equal({ requeueMs: 7 * 60_000 - 1000 });
    expect(calls.map((c) => c.id)).to.deep.equal(['tok-1']);
    expect(t.state(input(jobs, T('00:03:02'), { stored: { claim: 'kv-backups' } })).lastRequest).to.equal('tok-1');
  });

  it('a failed backup: a Warning with the Job\'s reason, the failure kept for status, retried after a minute, cleared by a success', async () => {
    const t = new BackupTracker();
    const { jobs, calls } = fakeJobs(['fail', 'done']);
    const r = await t.run(input(jobs, T('00:10:01')));
    expect(r.event).to.deep.include({ type: 'Warning', reason: 'BackupJobFailed' });
    expect(r.event!.message).to.match(/^scheduled backup \(2026-01-01T00:10:00.000Z\): Job .* no space left on device$/);
    expect(r.requeueMs).to.equal(BACKUP_RETRY_MS);
    expect(t.failure('ns/kv')?.reason).to.equal('BackupJobFailed');
    expect(await t.run(input(jobs, T('00:10:31')))).to.deep.equal({ requeueMs: 30_000 });
    expect(calls).to.have.length(1);
    expect((await t.run(input(jobs, T('00:11:01')))).event?.reason).to.equal('BackupTaken');
    expect(t.failure('ns/kv')).to.equal(undefined);
  });

  it('no healthy member: no Job, looked at again shortly', async () => {
    const t = new BackupTracker();
    const { jobs, calls } = fakeJobs(['done']);
    const i = input(jobs, T('00:10:01'));
    i.observed.members.forEach((m) => { m.healthy = false; });
    expect(await t.run(i)).to.deep.equal({ requeueMs: 5000 });
    expect(calls).to.deep.equal([]);
  });
});

// The engine hands every snapshot it streams (the pre-upgrade one, scheduled and on-demand backups) to the runtime's
// shipBackup (the object-store destinations) with the leader's KV hash at its revision; a destination that fails
// fails the step: the upgrade does not start while its pre-upgrade snapshot cannot be shipped, and nothing is
// restarted; once the destination works, the same step goes on.
import { expect } from 'chai';
import type { BackupKind, SnapshotRecord } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { newMemory, runPass, type PassResult } from '../../../operator/orchestrator/engine.js';
import { FakeClient, FakeRuntime, World } from './engine-fake.js';

class ShippingRuntime extends FakeRuntime {
  shipped: Array<{ location: string; kind: BackupKind; kv?: { hash: number; compactRevision: number } }> = [];
  failWith?: Error;
  async shipBackup(taken: SnapshotRecord, kind: BackupKind, kv?: { hash: number; compactRevision: number }): Promise<void> {
    if (this.failWith) throw this.failWith;
    this.shipped.push({ location: taken.location, kind, ...(kv ? { kv } : {}) });
  }
}

class HashingClient extends FakeClient {
  hashes: number[] = [];
  async hashKV(_url: string, revision: number): Promise<{ hash: number; compactRevision: number }> {
    this.hashes.push(revision);
    return { hash: 1000 + revision, compactRevision: 0 };
  }
}

describe('operator/orchestrator engine: snapshots shipped to object-store destinations', () => {
  it('a failing destination holds the upgrade at its pre-upgrade snapshot, restarting nothing; once it works the upgrade goes on', async () => {
    const w = new World(3, '3.4.34', 1);
    const spec = withDefaults({ version: '3.5.21', replicas: 3 });
    w.spec = spec;
    const rt = new ShippingRuntime(w, 'local');
    const client = new HashingClient(w);
    const memory = newMemory();
    rt.failWith = new Error('destination "offsite" (s3://kv-backups): the credentials were refused');
    const failing: PassResult[] = [];
    for (let i = 0; i < 5; i++) {
      failing.push(await runPass(rt, spec, client, memory));
      w.sim.tick();
    }
    expect(failing.map((r) => r.step.kind)).to.deep.equal(['snapshot', 'snapshot', 'snapshot', 'snapshot', 'snapshot']);
    expect(failing.every((r) => r.error?.message === 'destination "offsite" (s3://kv-backups): the credentials were refused')).to.equal(true);
    expect(w.sim.members.map((m) => m.release)).to.deep.equal(['3.4.34', '3.4.34', '3.4.34']);
    expect(rt.shipped).to.deep.equal([]);

    rt.failWith = undefined;
    const acted: string[] = [];
    for (let i = 0; i < 200; i++) {
      const r = await runPass(rt, spec, client, memory);
      if (r.error) throw r.error;
      if (r.acted) acted.push(r.step.kind);
      if (r.step.kind === 'steady') break;
      w.sim.tick();
    }
    expect(acted[0]).to.equal('snapshot');
    expect(acted).to.include('restartMember');
    expect(w.sim.members.map((m) => m.release)).to.deep.equal(['3.5.21', '3.5.21', '3.5.21']);
    expect(rt.shipped).to.have.length(1);
    expect(rt.shipped[0].kind).to.equal('pre-upgrade');
    expect(rt.shipped[0].kv).to.deep.equal({ hash: 1000 + client.hashes.at(-1)!, compactRevision: 0 });
  });

  it('scheduled and on-demand backups go to the destinations with their kind', async () => {
    const w = new World(3, '3.4.34', 1);
    w.backupRequest = 'r1';
    const spec = withDefaults({ version: '3.4.34', replicas: 3, backup: { schedule: '0 3 * * *', keep: 3 } });
    w.spec = spec;
    const rt = new ShippingRuntime(w, 'local');
    const client = new HashingClient(w);
    const memory = newMemory();
    for (let i = 0; i < 50; i++) {
      const r = await runPass(rt, spec, client, memory);
      if (r.error) throw r.error;
      if (r.step.kind === 'steady') break;
      w.sim.tick();
    }
    expect(rt.shipped.map((s) => s.kind)).to.deep.equal(['on-demand', 'scheduled']);
    expect(rt.shipped.map((s) => s.location)).to.deep.equal(w.backupsTaken.map((b) => b.location));
  });
});

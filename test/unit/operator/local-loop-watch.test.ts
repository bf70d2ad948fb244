// The long-running form of the local loop (orchestrator/local-loop.ts `watch`, what `local run` drives) over the
// engine's fake runtime, and the state dir's lock (runtime/local/lock.ts) with real processes: a spec changed while
// it runs is taken up, each settling reported after the pass that read the spec, a stop ends it after the pass
// under way; a dry-run pass records nothing; a lock is refused to a second taker while its holder lives and taken
// over once the holder is gone.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { SvcClusterSpec } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { newMemory, reconcile, runPass, type ReconcileResult } from '../../../operator/orchestrator/index.js';
import { lockFile, readLock, takeLock } from '../../../operator/runtime/local/index.js';
import { FakeClient, FakeRuntime, World } from './engine-fake.js';

const spec = (version: string): SvcClusterSpec => withDefaults({ version, replicas: 3 });

describe('operator/orchestrator local loop: watch (local run)', () => {
  it('takes up a changed spec, reports each settling after the pass that read it, and stops after the pass under way', async () => {
    const w = new World(3, '3.4.34', 0);
    const rt = new FakeRuntime(w, 'local');
    let current = spec('3.4.34');
    w.spec = current;
    const stop = new AbortController();
    const settled: Array<{ outcome: string; line: string; actions: string[]; passAt: number }> = [];
    let changedAt = 0;
    let passes = 0;
    const r = await reconcile(rt, current, {
      client: new FakeClient(w) as never,
      pollMs: 1,
      watch: {
        signal: stop.signal,
        idleMs: 1,
        spec: () => current,
        beforePass: async () => {
          passes++;
          w.sim.tick();
        },
        onSettled: (res: ReconcileResult, passAt: number) => {
          settled.push({ outcome: res.outcome, line: res.step.kind === 'steady' ? res.step.version : res.step.kind, actions: res.actions, passAt });
          if (settled.length === 2) {
            changedAt = Date.now();
            current = spec('3.5.21');
            w.spec = current;
          }
          if (settled.length > 2 && res.step.kind === 'steady' && res.step.version === '3.5.21') stop.abort();
        },
      },
    });
    expect(r.outcome).to.equal('stopped');
    expect(settled[0]).to.deep.include({ outcome: 'steady', line: '3.4.34', actions: [] });
    expect(settled[1]).to.deep.include({ outcome: 'steady', line: '3.4.34', actions: [] });
    const upgraded = settled.find((s) => s.line === '3.5.21')!;
    expect(upgraded.passAt).to.be.at.least(changedAt);
    // the upgrade's actions, once each, in the first settling on the new spec
    expect(upgraded.actions.filter((a) => a.startsWith('restartMember')).sort()).to.deep.equal(['restartMember m0 3.5.21', 'restartMember m1 3.5.21', 'restartMember m2 3.5.21']);
    expect(settled.filter((s) => s.line === '3.5.21').slice(1).every((s) => s.actions.length === 0)).to.equal(true);
    expect(passes).to.be.greaterThan(3);
  });

  it('ends (stopped, saying why) when the spec is gone: the cluster was deleted', async () => {
    const w = new World(3, '3.4.34', 0);
    w.spec = spec('3.4.34');
    const r = await reconcile(new FakeRuntime(w, 'local'), spec('3.4.34'), { client: new FakeClient(w) as never, watch: { signal: new AbortController().signal, spec: () => undefined } });
    expect(r.outcome).to.equal('stopped');
    expect(r.error).to.equal('the cluster is gone (its state file was removed)');
  });

  it('a dry-run pass plans and records nothing', async () => {
    const w = new World(3, '3.4.34', 0);
    w.spec = spec('3.5.21');
    const before = { text: w.recordsText, version: w.recordsVersion };
    const r = await runPass(new FakeRuntime(w, 'kubernetes'), spec('3.5.21'), new FakeClient(w), newMemory(), { dryRun: true });
    expect(r.step.kind).to.equal('snapshot');
    expect(r.acted).to.equal(false);
    expect({ text: w.recordsText, version: w.recordsVersion }).to.deep.equal(before);
    expect(w.prepares).to.equal(0);
  });
});

describe('operator/runtime/local lock: one loop per state dir', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is refused while its holder lives, released by it, and taken over from a holder that is gone', async () => {
    const mine = takeLock(dir, 'local run');
    if ('held' in mine) throw new Error('not taken');
    expect(mine.tookOver).to.equal(undefined);
    mine.update({ listen: 'http://127.0.0.1:1' });
    const again = takeLock(dir, 'local apply');
    expect(again).to.deep.equal({ held: readLock(dir) });
    expect(readLock(dir)).to.include({ pid: process.pid, command: 'local run', listen: 'http://127.0.0.1:1' });
    mine.release();
    expect(readLock(dir)).to.equal(undefined);

    // a holder SIGKILLed: its lock stays behind, and the next taker takes it over, naming it
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    writeFileSync(lockFile(dir), JSON.stringify({ pid: child.pid, command: 'local run', since: '2026-01-01T00:00:00.000Z' }));
    expect(takeLock(dir, 'local apply')).to.deep.equal({ held: { pid: child.pid, command: 'local run', since: '2026-01-01T00:00:00.000Z' } });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const next = takeLock(dir, 'local apply');
    if ('held' in next) throw new Error('not taken over');
    expect(next.tookOver).to.deep.equal({ pid: child.pid, command: 'local run', since: '2026-01-01T00:00:00.000Z' });
    expect(readLock(dir)).to.include({ pid: process.pid, command: 'local apply' });
    next.release();

    // the pid of a holder reused by another process (another start time): gone too
    writeFileSync(lockFile(dir), JSON.stringify({ pid: process.pid, started: '1', command: 'local run', since: '2026-01-01T00:00:00.000Z' }));
    const reused = takeLock(dir, 'local run');
    if ('held' in reused) throw new Error('a reused pid was taken for the holder');
    reused.release();
  });
});

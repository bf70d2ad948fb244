// --v2-deprecation (3.5), side by side with the reference 3.5: with --enable-v2 it is refused as mutually
// exclusive; a member whose v2 snapshot holds v2 keys refuses to restart at write-only (and beyond) and starts
// at not-yet with a warning to remove them.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memberArgs } from '../../../harness/member-args.js';
import { freePorts } from '../../../harness/ports.js';
import { sleep, spawnLogged, waitForHttp, type LoggedProcess } from '../../../harness/process.js';
import { ref35 } from '../../../harness/reference-cluster.js';
import { TARGETS, type Target } from '../../../harness/side-by-side.js';
import { spawnSvc } from '../../../harness/svc-cluster.js';

describe('--v2-deprecation (side by side with the reference 3.5)', function () {
  this.timeout(120000);
  let dir: string;
  const procs: LoggedProcess[] = [];
  let ports: number[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-v2depr-'));
    ports = await freePorts(4);
  });
  after(async () => {
    for (const p of procs) await p.stop('SIGKILL', 5000);
    rmSync(dir, { recursive: true, force: true });
  });

  const args = (t: Target, extra: string[]): string[] => {
    const i = TARGETS.indexOf(t);
    const clientUrl = `http://127.0.0.1:${ports[2 * i]}`;
    const peerUrl = `http://127.0.0.1:${ports[2 * i + 1]}`;
    return [...memberArgs({ name: 'm', dataDir: join(dir, t), clientUrl, peerUrl, initialCluster: `m=${peerUrl}`, token: 'v2depr', state: 'new' }), ...extra];
  };
  const spawn = (t: Target, extra: string[], tag: string): LoggedProcess => {
    const log = { logFile: join(dir, `${t}-${tag}.log`), name: `${t}-${tag}` };
    const p = t === 'svc' ? spawnSvc(args(t, extra), { ...log, version: '3.5.21' }) : spawnLogged(ref35('etcd'), args(t, extra), log);
    procs.push(p);
    return p;
  };
  let runs = 0;
  /** Runs a member that is expected to stop by itself: its exit status and output. */
  const run = async (t: Target, extra: string[]): Promise<{ code: number | null; out: string }> => {
    const p = spawn(t, extra, `run${++runs}`);
    const st = await Promise.race([p.exited, sleep(30000).then(() => undefined)]);
    if (!st) await p.stop('SIGKILL', 5000);
    return { code: st ? st.code : null, out: p.log() };
  };

  it('--enable-v2 with --v2-deprecation=write-only is refused as mutually exclusive', async () => {
    for (const t of TARGETS) {
      const r = await run(t, ['--enable-v2', '--v2-deprecation=write-only']);
      expect(r.code, t).to.not.equal(0);
      expect(r.out, t).to.contain('--enable-v2 and --v2-deprecation=write-only are mutually exclusive');
    }
  });

  it('v2 keys in the v2 snapshot: write-only refuses to restart, not-yet starts and warns', async () => {
    for (const t of TARGETS) {
      rmSync(join(dir, t), { recursive: true, force: true });
      mkdirSync(join(dir, t), { mode: 0o700 });
      const p = spawn(t, ['--enable-v2', '--snapshot-count=5'], 'v2');
      const url = `http://127.0.0.1:${ports[2 * TARGETS.indexOf(t)]}`;
      await waitForHttp(`${url}/health`, { timeoutMs: 30000, process: p });
      // more entries than --snapshot-count, so the v2 snapshot holds the key
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${url}/v2/keys/foo`, { method: 'PUT', body: `value=bar${i}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
        expect(res.status, `${t} v2 put`).to.be.oneOf([200, 201]);
      }
      await p.stop('SIGTERM', 15000);
    }
    for (const t of TARGETS) {
      const r = await run(t, ['--v2-deprecation=write-only']);
      expect(r.code, `${t}: ${r.out.slice(-400)}`).to.not.equal(0);
      expect(r.out, t).to.contain('detected disallowed custom content in v2store for stage --v2-deprecation=write-only');
    }
    for (const t of TARGETS) {
      const p = spawn(t, ['--v2-deprecation=not-yet'], 'notyet');
      await waitForHttp(`http://127.0.0.1:${ports[2 * TARGETS.indexOf(t)]}/health`, { timeoutMs: 30000, process: p });
      expect(p.log(), t).to.contain('detected custom v2store content. Etcd v3.5 is the last version allowing to access it using API v2. Please remove the content.');
      await p.stop('SIGTERM', 15000);
    }
  });
});

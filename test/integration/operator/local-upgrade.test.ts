// The orchestrator and the local runtime against real svc processes on 127.0.0.1: the full 3.3 -> 3.4 -> 3.5
// upgrade under a writing client, refusals that leave the cluster untouched, an orchestrator killed at
// every step and restarted, and a member that cannot start on the new release.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import { API_VERSION, KIND, type SvcCluster } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import { MemberClient } from '../../../operator/members/index.js';
import { DEFAULT_SVC_ENTRY, LocalRuntime } from '../../../operator/runtime/local/index.js';
import { BackgroundWriter } from '../../../operator/workload/writer.js';
import { operatorCli } from './operator-cli.js';
import { LeaderTracker } from '../../../operator/workload/leader-tracker.js';

const dirs: string[] = [];
const runtimes: LocalRuntime[] = [];

function manifest(name: string, version: string, replicas = 3): SvcCluster {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: withDefaults({ version, replicas }) };
}

function tempDir(tag: string): string {
  const d = mkdtempSync(join(tmpdir(), `svc-op-${tag}-`));
  dirs.push(d);
  return d;
}

function pids(rt: LocalRuntime): number[] {
  return rt.state()!.members.map((m) => m.pid!);
}

async function urls(rt: LocalRuntime): Promise<string[]> {
  return (await rt.members()).map((m) => m.clientURL);
}

/** How many times each member was started on `version` (from the start markers in its log). */
function startsOn(rt: LocalRuntime, version: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of rt.state()!.members) out[m.name] = readFileSync(m.logFile, 'utf8').split('\n').filter((l) => l.startsWith(`=== svc start ${version} `)).length;
  return out;
}

after(async function () {
  this.timeout(60_000);
  for (const rt of runtimes) await rt.delete().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('operator local runtime: the full 3.3 -> 3.4 -> 3.5 upgrade against real processes', function () {
  this.timeout(180_000);
  const stateDir = tempDir('full');
  const rt = new LocalRuntime({ stateDir, name: 'full' });
  runtimes.push(rt);

  it('creates the cluster, plans 3.3 -> 3.5 as two hops untouched, upgrades twice under writes, refuses the downgrade', async () => {
    const created = await applyCluster(manifest('full', '3.3.27'), { stateDir });
    expect(created.outcome).to.equal('steady');

    const before = pids(rt);
    const planned = await operatorCli(['local', 'upgrade-plan', 'full', '--to', '3.5.21', '--state-dir', stateDir]);
    expect(planned.code, planned.out).to.equal(0);
    expect(planned.out).to.include('full: 3.3.27 -> 3.5.21 in 2 hops, each a rolling upgrade');
    expect(planned.out).to.include('  1. 3.3.27 -> 3.4.34   a new minor line\n  2. 3.4.34 -> 3.5.21   a new minor line\n');
    expect(planned.out).to.match(/first step: .*snapshot/);
    expect(planned.out).to.include('nothing was changed (a plan only)');
    expect(pids(rt)).to.deep.equal(before);
    expect(rt.state()!.records.progress).to.equal(undefined);

    const endpoints = await urls(rt);
    const c = await Client.connect({ endpoints });
    for (let i = 0; i < 50; i++) await c.put(`sample/${i}`, `value-${i}`);
    const writer = new BackgroundWriter({ endpoints, intervalMs: 10 });
    await writer.start();
    const tracker = new LeaderTracker(async () => new Map((await rt.members()).map((m) => [m.name, m.clientURL])), 100);
    tracker.start();
    const changes: number[] = [];
    for (const to of ['3.4.34', '3.5.21']) {
      const n0 = tracker.changes;
      const r = await applyCluster(manifest('full', to), { stateDir });
      expect(r.outcome, r.error ?? JSON.stringify(r.step)).to.equal('steady');
      expect(r.snapshots).to.have.length(1);
      // Followers first, then leadership moved, then the old leader.
      expect(r.actions[0]).to.match(/^snapshot /);
      expect(r.actions.filter((a) => a.startsWith('restartMember'))).to.have.length(3);
      expect(r.actions.at(-2)).to.match(/^moveLeader /);
      expect(r.actions.at(-1)).to.equal(`restartMember ${r.actions.at(-2)!.split(' ')[1]} ${to}`);
      await new Promise((res) => setTimeout(res, 500));
      changes.push(tracker.changes - n0);
      expect(rt.state()!.records.progress).to.include({ to, step: 'complete' });
    }
    const stats = await writer.stop();
    await tracker.stop();
    expect(stats.failed, stats.errors.join('; ')).to.equal(0);
    expect(stats.succeeded).to.be.greaterThan(0);
    expect(changes).to.deep.equal([1, 1]);

    const mc = new MemberClient();
    for (const u of endpoints) expect(await mc.version(u)).to.deep.equal({ etcdserver: '3.5.21', etcdcluster: '3.5.0' });
    mc.close();
    const got = new Map<string, string>();
    for (const prefix of ['sample/', 'writer/']) for (const kv of (await c.get(prefix, { prefix: true })).kvs) got.set(kv.key.toString(), kv.value.toString());
    for (let i = 0; i < 50; i++) expect(got.get(`sample/${i}`)).to.equal(`value-${i}`);
    for (const [k, v] of stats.written) expect(got.get(k)).to.equal(v);
    c.close();
    expect(readdirSync(join(stateDir, 'snapshots')).filter((f) => f.endsWith('.db'))).to.have.length(2);

    const done = pids(rt);
    const down = await applyCluster(manifest('full', '3.4.34'), { stateDir });
    expect(down.step).to.include({ kind: 'blocked', code: 'DowngradeAfterCompletion' });
    expect(pids(rt)).to.deep.equal(done);

    const st = await operatorCli(['local', 'status', '--state-dir', stateDir, '--output', 'json']);
    expect(st.code).to.equal(0);
    const status = JSON.parse(st.out) as { clusterVersion: string; members: Array<{ release: string; healthy: boolean; leader: boolean }> };
    expect(status.clusterVersion).to.equal('3.5.0');
    expect(status.members.map((m) => m.release)).to.deep.equal(['3.5.21', '3.5.21', '3.5.21']);
    expect(status.members.filter((m) => m.leader)).to.have.length(1);
  });
});

describe('operator local runtime: the orchestrator killed at each step resumes', function () {
  this.timeout(180_000);

  it('completes 3.3 -> 3.4 across kills, starting each member on 3.4 once and taking one snapshot', async () => {
    const stateDir = tempDir('crash');
    const file = join(stateDir, '..', `${stateDir.split('/').pop()}.yaml`);
    dirs.push(file);
    writeFileSync(file, `apiVersion: ${API_VERSION}\nkind: ${KIND}\nmetadata:\n  name: crash\nspec:\n  version: 3.3.27\n  replicas: 3\n`);
    const created = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
    const rt = new LocalRuntime({ stateDir });
    runtimes.push(rt);
    expect(created.code, created.out).to.equal(0);
    writeFileSync(file, readFileSync(file, 'utf8').replace('3.3.27', '3.4.34'));
    const crashes = ['snapshot:1', 'snapshot:1:after', 'restartMember:1', 'restartMember:1:after', 'moveLeader:1', 'restartMember:1:after', 'complete:1', ''];
    let killed = 0;
    let last = { code: null as number | null, signal: null as NodeJS.Signals | null, out: '' };
    for (const at of crashes) {
      last = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir], { SVC_OPERATOR_CRASH_AT: at });
      if (last.signal === 'SIGKILL') killed++;
      else break;
    }
    expect(last.code, last.out).to.equal(0);
    expect(killed).to.be.at.least(6);
    expect(startsOn(rt, '3.4.34')).to.deep.equal({ 'crash-0': 1, 'crash-1': 1, 'crash-2': 1 });
    expect(readdirSync(join(stateDir, 'snapshots')).filter((f) => f.endsWith('.db'))).to.have.length(1);
    const p = rt.state()!.records.progress!;
    expect(p.finishedAt).to.be.a('number');
    expect(p.snapshot?.sha256).to.match(/^[0-9a-f]{64}$/);
    const mc = new MemberClient();
    for (const u of await urls(rt)) expect(await mc.version(u)).to.deep.equal({ etcdserver: '3.4.34', etcdcluster: '3.4.0' });
    mc.close();
  });
});

describe('operator local runtime: a member that cannot start on the new release', function () {
  this.timeout(180_000);

  it('blocks with a clear reason, leaves the cluster serving, and resumes once the member can start', async () => {
    const stateDir = tempDir('fail');
    const wrapper = join(stateDir, '..', `${stateDir.split('/').pop()}-svc.mjs`);
    dirs.push(wrapper);
    const real = JSON.stringify(pathToFileURL(DEFAULT_SVC_ENTRY).href);
    const failing = `export async function main(argv) {\n  if (process.env.SVC_VERSION === '3.4.34') { console.error('fatal: cannot open the data dir (simulated failure on 3.4.34)'); return 1; }\n  return (await import(${real})).main(argv);\n}\n`;
    writeFileSync(wrapper, failing);
    const rt = new LocalRuntime({ stateDir });
    runtimes.push(rt);
    expect((await applyCluster(manifest('fail', '3.3.27'), { stateDir, svcEntry: wrapper })).outcome).to.equal('steady');

    const r = await applyCluster(manifest('fail', '3.4.34'), { stateDir, svcEntry: wrapper });
    expect(r.step).to.include({ kind: 'blocked', code: 'MemberFailedToStart' });
    // the member's own last line (of the start that failed), and the upgrade's words: an upgrade is under way
    expect((r.step as { reason: string }).reason).to.match(/cannot run 3\.4\.34: exited with code 1 while starting; its last log line: fatal: cannot open the data dir.*the upgrade resumes/);
    expect(r.step).to.include({ condition: 'UpgradeBlocked' });
    expect(r.actions.filter((a) => a.startsWith('restartMember'))).to.have.length(1);

    // Still serving: the two other members are healthy and take writes.
    const members = await rt.members();
    const up = members.filter((m) => m.running);
    expect(up).to.have.length(2);
    const mc = new MemberClient();
    for (const m of up) expect(await mc.healthy(m.clientURL)).to.equal(true);
    mc.close();
    const c = await Client.connect({ endpoints: up.map((m) => m.clientURL) });
    await c.put('still', 'serving');
    expect((await c.get('still')).kvs[0].value.toString()).to.equal('serving');
    c.close();

    // Rolling back while a member still runs 3.3 is allowed: the failed member is started on 3.3.27 again.
    const back = await applyCluster(manifest('fail', '3.3.27'), { stateDir, svcEntry: wrapper });
    expect(back.outcome, back.error ?? JSON.stringify(back.step)).to.equal('steady');
    expect((await rt.members()).map((m) => [m.configuredVersion, m.running])).to.deep.equal([['3.3.27', true], ['3.3.27', true], ['3.3.27', true]]);
    expect(rt.state()!.records.progress).to.include({ to: '3.4.34', supersededBy: '3.3.27' });

    // The cause goes away: applying 3.4.34 again upgrades (with a new snapshot).
    writeFileSync(wrapper, `export async function main(argv) {\n  return (await import(${real})).main(argv);\n}\n`);
    const again = await applyCluster(manifest('fail', '3.4.34'), { stateDir, svcEntry: wrapper });
    expect(again.outcome, again.error ?? JSON.stringify(again.step)).to.equal('steady');
    expect(rt.state()!.records.progress).to.include({ to: '3.4.34', step: 'complete' });
  });
});

describe('operator local runtime: authentication on refuses 3.4 -> 3.5', function () {
  this.timeout(120_000);

  it('blocks with AuthEnabledUpgradeTo35 and touches nothing', async () => {
    const stateDir = tempDir('auth');
    const rt = new LocalRuntime({ stateDir });
    runtimes.push(rt);
    expect((await applyCluster(manifest('auth', '3.4.34', 1), { stateDir })).outcome).to.equal('steady');
    const c = await Client.connect({ endpoints: await urls(rt) });
    await c.roleAdd('root').catch(() => undefined);
    await c.userAdd('root', 'secret');
    await c.userGrantRole('root', 'root');
    await c.authEnable();
    c.close();
    const before = pids(rt);
    const r = await applyCluster(manifest('auth', '3.5.21', 1), { stateDir });
    expect(r.step).to.include({ kind: 'blocked', code: 'AuthEnabledUpgradeTo35' });
    expect(r.actions).to.deep.equal([]);
    expect(pids(rt)).to.deep.equal(before);
    expect(rt.state()!.records.progress).to.equal(undefined);
  });
});

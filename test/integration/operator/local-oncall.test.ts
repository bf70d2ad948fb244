// Break-glass and the on-call verbs of `svc-operator local` on one real 3-member cluster: a suspension holds a
// version change back until resumed; move-leader, restart and alarm disarm act through the planner's gate (each
// with --dry-run, which changes nothing) and refuse bad input naming it; report writes one tar.gz; spec.replicas 0
// hibernates (every process gone, data kept) and a replica count wakes the same data with every acknowledged key.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { API_VERSION, KIND, type SvcCluster } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import { BackgroundWriter } from '../../../operator/workload/writer.js';
import { Client } from '../../../server/client/index.js';
import { endProcess, useLocalRuntime } from './local-fixture.js';
import { operatorCli } from './operator-cli.js';

const NAME = 'oc';
const manifest = (version: string, replicas = 3): SvcCluster => ({ apiVersion: API_VERSION, kind: KIND, metadata: { name: NAME }, spec: withDefaults({ version, replicas }) });

describe('operator local runtime: break-glass and the on-call verbs', function () {
  this.timeout(180_000);
  const { stateDir, rt, mc } = useLocalRuntime(NAME, { timeoutMs: 3000, attempts: 2 });
  const file = join(stateDir, '..', `${NAME}-${process.pid}.yaml`);
  const report = join(stateDir, '..', `${NAME}-${process.pid}-report.tar.gz`);
  const cli = (...args: string[]) => operatorCli(['local', ...args, '--state-dir', stateDir]);
  const urls = () => rt.state()!.members.map((m) => `http://127.0.0.1:${m.clientPort}`);
  const starts = () => Object.fromEntries(rt.state()!.members.map((m) => [m.name, readFileSync(m.logFile, 'utf8').split('\n').filter((l) => l.startsWith('=== svc start')).length]));
  const leader = async () => {
    for (const m of rt.state()!.members) if (await mc.isLeader(`http://127.0.0.1:${m.clientPort}`).catch(() => false)) return m.name;
    return undefined;
  };
  /** The output, and on failure each member's last log lines (why a member did not start). */
  const why = (r: { code: number | null; out: string }) => (r.code === 0 ? r.out : `${r.out}\n${rt.state()!.members.map((m) => `--- ${m.name}\n${readFileSync(m.logFile, 'utf8').split('\n').slice(-15).join('\n')}`).join('\n')}`);
  const releases = async () => Promise.all(urls().map(async (u) => (await mc.version(u)).etcdserver));
  const alarm = async (action: 'ACTIVATE' | 'GET', alarmType: string, memberID: string) => {
    const r = await fetch(`${urls()[0]}/v3/maintenance/alarm`, { method: 'POST', body: JSON.stringify({ action, memberID, alarm: alarmType }), signal: AbortSignal.timeout(5000) });
    return (await r.json()) as { alarms?: unknown[] };
  };

  before(async () => {
    const r = await applyCluster(manifest('3.4.34'), { stateDir });
    expect(r.outcome, r.error).to.equal('steady');
  });
  after(() => {
    rmSync(file, { force: true });
    rmSync(report, { force: true });
  });

  it('suspend holds a version change back (the spec recorded, no member touched) until resume; --dry-run changes nothing', async () => {
    const dry = await cli('suspend', NAME, '--dry-run');
    expect(dry.code, dry.out).to.equal(0);
    expect(dry.out).to.match(/dry run: would suspend oc/);
    expect(rt.state()!.requests.suspended).to.equal(undefined);
    expect((await cli('suspend', NAME)).code).to.equal(0);
    expect(rt.state()!.requests.suspended).to.equal(true);
    const before = starts();
    writeFileSync(file, JSON.stringify(manifest('3.5.21')));
    const held = await cli('apply', '-f', file);
    expect(held.code, held.out).to.equal(1);
    expect(held.out).to.match(/wait \(Suspended\): reconciling is suspended .*next step then: snapshot from leader/);
    expect(rt.state()!.spec.version).to.equal('3.5.21');
    expect(await releases()).to.deep.equal(['3.4.34', '3.4.34', '3.4.34']);
    expect(starts()).to.deep.equal(before);
    // the verbs that act refuse while suspended, nothing touched
    const move = await cli('move-leader', NAME);
    expect(move.code).to.equal(1);
    expect(move.out).to.match(/suspended .*resume it first/);
    expect((await cli('status', '--output', 'json')).out).to.match(/"suspended": true/);
    const wouldResume = await cli('resume', NAME, '--dry-run');
    expect(wouldResume.out, wouldResume.out).to.match(/would resume/);
    expect(rt.state()!.requests.suspended).to.equal(true);
    expect((await cli('resume', NAME)).code).to.equal(0);
    const go = await cli('apply', '-f', file);
    expect(go.code, why(go)).to.equal(0);
    expect(await releases()).to.deep.equal(['3.5.21', '3.5.21', '3.5.21']);
  });

  it('move-leader: --dry-run leaves the leader; --to a follower moves it there (a request the planner answers); an unknown member is refused naming it', async () => {
    const from = await leader();
    const to = rt.state()!.members.map((m) => m.name).find((n) => n !== from)!;
    const dry = await cli('move-leader', NAME, '--to', to, '--dry-run');
    expect(dry.code, dry.out).to.equal(0);
    expect(dry.out).to.contain(`dry run: would move leadership from ${from} to ${to}`);
    expect(await leader()).to.equal(from);
    const moved = await cli('move-leader', NAME, '--to', to);
    expect(moved.code, moved.out).to.equal(0);
    expect(await leader()).to.equal(to);
    expect(rt.state()!.requests.maintenance).to.deep.include({ action: 'move-leader', member: to });
    expect(rt.state()!.records.maintenance?.lastRequest, 'answered').to.equal(rt.state()!.requests.maintenance!.token);
    const bad = await cli('move-leader', NAME, '--to', 'oc-9');
    expect(bad.code).to.equal(1);
    expect(bad.out).to.contain('no member oc-9; the members are oc-0, oc-1, oc-2');
    const wrong = await cli('move-leader', 'other');
    expect(wrong.code).to.equal(1);
    expect(wrong.out).to.match(/holds cluster "oc", not "other"/);
  });

  it('restart: --dry-run and an unknown member touch nothing; one member, then all (leader last) under a writer with no failed write', async () => {
    const before = starts();
    const dry = await cli('restart', NAME, '--dry-run');
    expect(dry.code, dry.out).to.equal(0);
    expect(dry.out).to.match(/would restart oc-0, oc-1, oc-2 one at a time/);
    const bad = await cli('restart', NAME, 'oc-7');
    expect(bad.code).to.equal(1);
    expect(bad.out).to.contain('cannot restart oc-7: no member oc-7');
    expect(starts()).to.deep.equal(before);
    expect(rt.state()!.requests.restart).to.equal(undefined);
    const one = await cli('restart', NAME, 'oc-1');
    expect(one.code, why(one)).to.equal(0);
    expect(starts()).to.deep.equal({ ...before, 'oc-1': before['oc-1'] + 1 });
    expect(rt.state()!.records.rollout).to.include({ reason: 'RestartRequested' });
    const writer = new BackgroundWriter({ endpoints: urls(), intervalMs: 10 });
    await writer.start();
    const lead = await leader();
    const all = await cli('restart', NAME);
    const stats = await writer.stop();
    expect(all.code, why(all)).to.equal(0);
    expect(starts()).to.deep.equal({ 'oc-0': before['oc-0'] + 1, 'oc-1': before['oc-1'] + 2, 'oc-2': before['oc-2'] + 1 });
    const restarted = [...all.out.matchAll(/restart (oc-\d) on 3\.5\.21 \(RestartRequested\)/g)].map((m) => m[1]);
    expect(restarted.at(-1), 'the leader last').to.equal(lead);
    expect(all.out).to.match(new RegExp(`move leadership from ${lead} to`));
    expect(stats.failed, stats.errors.join('; ')).to.equal(0);
    expect(stats.succeeded).to.be.greaterThan(0);
  });

  it('defrag and compact: --dry-run and an unknown member record nothing; compact, then one member and every member defragmented under a writer', async () => {
    const dry = await cli('defrag', NAME, '--dry-run');
    expect(dry.code, dry.out).to.equal(0);
    expect(dry.out).to.match(/dry run: would defragment every member one at a time/);
    expect((await cli('compact', NAME, '--dry-run')).out).to.match(/dry run: would compact the history/);
    const bad = await cli('defrag', NAME, 'oc-7');
    expect(bad.code).to.equal(1);
    expect(bad.out).to.contain('cannot defragment oc-7: no member oc-7');
    // the request recorded last is still move-leader's (answered)
    expect(rt.state()!.requests.maintenance).to.deep.include({ action: 'move-leader' });
    expect(rt.state()!.records.maintenance?.lastRequest).to.equal(rt.state()!.requests.maintenance!.token);
    // history to compact and free pages to give back
    const value = Buffer.alloc(20_000, 'v').toString('base64');
    for (let k = 0; k < 60; k++) await fetch(`${urls()[0]}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key: Buffer.from(`big-${k % 10}`).toString('base64'), value }) });
    const compacted = await cli('compact', NAME);
    expect(compacted.code, why(compacted)).to.equal(0);
    expect(compacted.out).to.match(/compact .*\ncompacted\n$/s);
    const writer = new BackgroundWriter({ endpoints: urls(), intervalMs: 10 });
    await writer.start();
    const one = await cli('defrag', NAME, 'oc-1');
    const all = await cli('defrag', NAME);
    const stats = await writer.stop();
    expect(one.code, why(one)).to.equal(0);
    expect([...one.out.matchAll(/member (oc-\d) defragmented \(Requested\)/g)].map((m) => m[1])).to.deep.equal(['oc-1']);
    expect(all.code, why(all)).to.equal(0);
    expect([...all.out.matchAll(/member (oc-\d) defragmented \(Requested\)/g)].map((m) => m[1]).sort()).to.deep.equal(['oc-0', 'oc-1', 'oc-2']);
    expect(stats.succeeded).to.be.greaterThan(0);
  });

  it('alarm list and disarm: refused while the cause persists (naming it), --dry-run keeps the alarm, disarm clears it', async () => {
    expect((await cli('alarm', 'list', NAME)).out).to.contain('no alarm raised in oc');
    const none = await cli('alarm', 'disarm', NAME);
    expect(none.code).to.equal(1);
    expect(none.out).to.contain('no alarm is raised; nothing to disarm');
    const id = (await mc.status(urls()[0])).id;
    // a NOSPACE raised while every database is far below the quota: its cause is gone
    await alarm('ACTIVATE', 'NOSPACE', id);
    expect((await cli('alarm', 'list', NAME)).out).to.match(/NOSPACE\toc-0/);
    const dry = await cli('alarm', 'disarm', NAME, '--dry-run');
    expect(dry.code, dry.out).to.equal(0);
    expect((await alarm('GET', 'NONE', '0')).alarms).to.have.length(1);
    expect((await cli('alarm', 'disarm', NAME)).code).to.equal(0);
    expect((await alarm('GET', 'NONE', '0')).alarms ?? []).to.have.length(0);
    // CORRUPT while a member cannot be hashed: refused, naming it, the alarm left raised
    const m2 = rt.state()!.members[2];
    await endProcess(m2.pid!, 'SIGTERM');
    await alarm('ACTIVATE', 'CORRUPT', '0');
    const refused = await cli('alarm', 'disarm', NAME);
    expect(refused.code).to.equal(1);
    expect(refused.out).to.contain('the CORRUPT alarm\'s cause persists: no KV hash from oc-2');
    expect((await alarm('GET', 'NONE', '0')).alarms).to.have.length(1);
    // the operator itself: oc-2 started again, every hash agrees, the alarm disarmed (planner's disarmAlarm)
    const r = await applyCluster(manifest('3.5.21'), { stateDir });
    expect(r.outcome, r.error ?? JSON.stringify(r.step)).to.equal('steady');
    expect((await alarm('GET', 'NONE', '0')).alarms ?? []).to.have.length(0);
  });

  it('report: one tar.gz with the resource, status, events, each member\'s status and the last logs', async () => {
    const out = report;
    // a read-only verb takes --dry-run too: what it would write, nothing written
    const dry = await cli('report', NAME, '--file', out, '--dry-run');
    expect(dry.code, dry.out).to.equal(0);
    expect(dry.out).to.equal(`dry run: would write ${out}: 11 entries (cluster.json, state.json, observed.json, events.txt, members/oc-0.json, logs/oc-0.log, ` +
      'members/oc-1.json, logs/oc-1.log, members/oc-2.json, logs/oc-2.log, logs/operator.log); nothing was written\n');
    expect(existsSync(out)).to.equal(false);
    const r = await cli('report', NAME, '--file', out);
    expect(r.code, r.out).to.equal(0);
    // events.txt: the cluster's step history, a timed line per step line, oldest first, from its creation on
    const events = spawnSync('tar', ['-xzOf', out, 'events.txt'], { encoding: 'utf8' }).stdout.trimEnd().split('\n');
    expect(events.length, events.join('\n')).to.be.greaterThan(5);
    for (const e of events) expect(e).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}\S/);
    expect(events[0]).to.match(/Z {2}create 3 member\(s\) of 3\.4\.34/);
    expect(events.map((e) => e.slice(0, 24))).to.deep.equal(events.map((e) => e.slice(0, 24)).sort());
    expect(events.at(-1)!.slice(26)).to.equal(rt.state()!.lastStep);
    expect(events.some((e) => /restart oc-\d on 3\.5\.21/.test(e)), events.join('\n')).to.equal(true);
    const list = spawnSync('tar', ['-tzf', out], { encoding: 'utf8' });
    expect(list.status, list.stderr).to.equal(0);
    expect(list.stdout.trim().split('\n').sort()).to.deep.equal([
      'cluster.json', 'events.txt', 'logs/oc-0.log', 'logs/oc-1.log', 'logs/oc-2.log', 'logs/operator.log',
      'members/oc-0.json', 'members/oc-1.json', 'members/oc-2.json', 'observed.json', 'state.json',
    ]);
    const member = JSON.parse(spawnSync('tar', ['-xzOf', out, 'members/oc-1.json'], { encoding: 'utf8' }).stdout) as { version: { etcdserver: string } };
    expect(member.version.etcdserver).to.equal('3.5.21');
  });

  it('spec.replicas 0 hibernates (no process left, data kept, status says so); a replica count wakes the same data with every acknowledged key', async () => {
    const writer = new BackgroundWriter({ endpoints: urls(), intervalMs: 5, prefix: 'hib/' });
    await writer.start();
    await new Promise((r) => setTimeout(r, 500));
    const stats = await writer.stop();
    expect(stats.failed).to.equal(0);
    const pids = rt.state()!.members.map((m) => m.pid!);
    const sleep = await applyCluster(manifest('3.5.21', 0), { stateDir });
    expect(sleep.outcome, sleep.error).to.equal('steady');
    expect(sleep.step).to.deep.equal({ kind: 'hibernated', members: 3 });
    expect(sleep.actions).to.deep.equal(['hibernate oc-0,oc-1,oc-2']);
    // gone, or exited and not yet reaped by this process (which started them)
    const gone = (pid: number) => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z');
    for (const pid of pids) expect(gone(pid), `pid ${pid}`).to.equal(true);
    for (const m of rt.state()!.members) expect(existsSync(join(m.dataDir, 'member', 'wal')), m.dataDir).to.equal(true);
    const st = await cli('status');
    expect(st.out).to.contain('hibernated: every member stopped, data kept');
    // applied again while hibernated: nothing started
    expect((await applyCluster(manifest('3.5.21', 0), { stateDir })).actions).to.deep.equal([]);
    const wake = await applyCluster(manifest('3.5.21', 3), { stateDir });
    expect(wake.outcome, wake.error ?? JSON.stringify(wake.step)).to.equal('steady');
    expect(wake.actions[0]).to.equal('wake oc-0,oc-1,oc-2');
    expect(rt.state()!.records.hibernated).to.equal(undefined);
    const client = await Client.connect({ endpoints: urls() });
    try {
      const got = await client.get('hib/', { prefix: true });
      const kept = new Map(got.kvs.map((kv) => [Buffer.from(kv.key).toString(), Buffer.from(kv.value).toString()]));
      expect(stats.written.size).to.be.greaterThan(10);
      for (const [k, v] of stats.written) expect(kept.get(k), k).to.equal(v);
    } finally {
      await client.close();
    }
  });
});

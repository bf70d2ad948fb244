// `svc-operator local run` against real svc processes: it starts a SIGKILLed member again with no other command, serves
// /healthz and /metrics, refuses a second loop on the state dir, takes the spec `local apply` hands over beside it
// (an upgrade), takes scheduled backups when due, survives its own SIGKILL in the middle of that upgrade (the next `local run` takes the stale lock over
// and resumes the recorded step: every member started once on the new release), and stops cleanly on SIGTERM. The
// systemd unit of examples/ runs the command line checked here (with --dry-run).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { API_VERSION, KIND, type SvcCluster } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import { readLock, type LockHolder } from '../../../operator/runtime/local/index.js';
import { waitFor } from '../../../harness/process.js';
import { repoRoot } from '../../k8s/binaries.js';
import { endProcess, useLocalRuntime } from './local-fixture.js';
import { operatorCli, startOperatorCli, type StartedCli } from './operator-cli.js';

// a scheduled backup every 5 seconds: local run takes them as they fall due
const manifest = (version: string): SvcCluster => ({ apiVersion: API_VERSION, kind: KIND, metadata: { name: 'lr' }, spec: withDefaults({ version, replicas: 3, backup: { schedule: '*/5 * * * * *', keep: 2 } }) });

describe('operator local run: a local cluster that looks after itself (real processes)', function () {
  this.timeout(240_000);
  const { stateDir, rt, mc } = useLocalRuntime('lr');
  const file = join(stateDir, 'cluster.json');
  const runs: StartedCli[] = [];
  after(async () => {
    for (const r of runs) await endProcess(r.pid, 'SIGKILL').catch(() => undefined);
  });

  /** Starts `local run` and waits for its first line; its lock as written then. */
  async function startRun(env: NodeJS.ProcessEnv = {}): Promise<{ run: StartedCli; lock: LockHolder; url: string }> {
    const run = startOperatorCli(['local', 'run', '--state-dir', stateDir], env);
    runs.push(run);
    const url = await waitFor('the first line of local run', async () => /on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(run.output())?.[1], 30_000, 100);
    const lock = readLock(stateDir)!;
    expect(run.output().split('\n')[0]).to.match(new RegExp(`^\\S+Z svc-operator local run: looking after lr in ${stateDir} \\(pid ${run.pid}\\); /healthz and /metrics on ${url}$`));
    expect(lock).to.include({ pid: run.pid, command: 'local run', listen: url });
    return { run, lock, url };
  }
  const holder = (l: LockHolder) => `\`svc-operator local run\` (pid ${l.pid}, since ${l.since}, ${l.listen})`;
  const starts = (name: string, version: string) => readFileSync(rt.state()!.members.find((m) => m.name === name)!.logFile, 'utf8').split('\n').filter((l) => l.startsWith(`=== svc start ${version} `)).length;

  it('refuses a state dir without a cluster and a listen address off loopback', async () => {
    const none = await operatorCli(['local', 'run', '--state-dir', stateDir]);
    expect(none.code).to.equal(1);
    expect(none.out).to.equal(`svc-operator: no local cluster in ${stateDir}; create one with \`svc-operator local apply -f <cluster.yaml> --state-dir ${stateDir}\`, then start local run\n`);
    const wide = await operatorCli(['local', 'run', '--state-dir', stateDir, '--listen', '0.0.0.0:9000']);
    expect(wide.code).to.equal(2);
    expect(wide.out.split('\n')[0]).to.equal('svc-operator: --listen takes a loopback address and port (127.0.0.1:PORT, [::1]:PORT or localhost:PORT; port 0: any free one), not 0.0.0.0:9000');
  });

  it('heals a SIGKILLed member by itself, serves /healthz and /metrics, and is the one loop of its state dir', async () => {
    expect((await applyCluster(manifest('3.4.34'), { stateDir })).outcome).to.equal('steady');
    // the command line of the systemd unit in examples/, on this state dir, with --dry-run
    const unit = readFileSync(join(repoRoot(), 'examples', 'svc-operator-local.service'), 'utf8');
    const exec = /^ExecStart=\/usr\/bin\/env svc-operator (.*)$/m.exec(unit)![1].split(' ').map((a) => (a === '/var/lib/svc' ? stateDir : a));
    expect(exec).to.deep.equal(['local', 'run', '--state-dir', stateDir, '--listen', '127.0.0.1:9379']);
    const dry = await operatorCli([...exec, '--dry-run']);
    expect(dry.code).to.equal(0);
    // (steady, or the scheduled backup of the 5-second slot just due)
    const first = /^ {2}(steady: every member runs 3\.4\.34; nothing to do|backup: scheduled backup \(slot \S+\) from leader lr-\d)$/.source.slice(1, -1);
    expect(dry.out).to.match(new RegExp(`^dry run: the first pass of local run over lr in ${stateDir} would:\n${first}\nnothing was changed\n$`));
    expect(existsSync(join(stateDir, 'operator.lock'))).to.equal(false);

    const { run, lock, url } = await startRun();
    const health = await fetch(`${url}/healthz`);
    expect(health.status).to.equal(200);
    expect(await health.text()).to.equal('ok\n');
    await waitFor('the steady gauge', async () => (await (await fetch(`${url}/metrics`)).text()).includes('svc_operator_upgrade_step{namespace="local",cluster="lr",step="steady"} 1') || undefined, 20_000, 200);

    // one loop per state dir: a second local run and a delete are refused, naming the holder and the way out
    const busy = `${stateDir} is looked after by ${holder(lock)}, one loop per state dir; stop it first (kill -TERM ${lock.pid}, or systemctl stop of its unit: it finishes the step under way), then run this again`;
    const second = await operatorCli(['local', 'run', '--state-dir', stateDir]);
    expect(second.code).to.equal(1);
    expect(second.out).to.equal(`svc-operator: ${busy}\n`);
    const del = await operatorCli(['local', 'delete', '--state-dir', stateDir]);
    expect(del.code).to.equal(1);
    expect(del.out).to.equal(`svc-operator: ${busy}\n`);

    // a member SIGKILLed comes back with no command run
    const victim = rt.state()!.members.find((m) => m.name === 'lr-1')!;
    await endProcess(victim.pid!, 'SIGKILL');
    await waitFor('lr-1 running again and healthy', async () => {
      const now = rt.state()!.members.find((m) => m.name === 'lr-1')!;
      return (now.pid !== victim.pid && (await mc.healthy(`http://127.0.0.1:${now.clientPort}`).catch(() => false))) || undefined;
    }, 60_000, 200);
    expect(run.output()).to.match(/Z started stopped member\(s\): lr-1\n/);
    expect(starts('lr-1', '3.4.34')).to.equal(2);

    // scheduled backups taken at their time, with no command run; local status names the loop
    const since = new Date(lock.since).getTime();
    await waitFor('a scheduled backup taken by local run', async () => rt.state()!.records.backups?.items?.some((i) => i.kind === 'scheduled' && Date.parse(i.time) > since) || undefined, 30_000, 250);
    expect(run.output()).to.match(/Z backup: /);
    const status = await operatorCli(['local', 'status', '--state-dir', stateDir]);
    expect(status.code).to.equal(0);
    expect(status.out).to.include(`looked after by svc-operator local run (pid ${lock.pid}, since ${lock.since}, ${url})\n`);
  });

  it('takes an upgrade handed over by local apply, survives its own SIGKILL mid-way (resumed, no step twice), stops on SIGTERM', async () => {
    // the running loop is stopped; the next one dies after recording the second member restart, before it acts
    const first = runs.at(-1)!;
    process.kill(first.pid, 'SIGTERM');
    expect((await first.exited).code).to.equal(0);
    const { run, lock } = await startRun({ SVC_OPERATOR_CRASH_AT: 'restartMember:2' });

    writeFileSync(file, JSON.stringify(manifest('3.5.21')));
    const apply = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
    expect((await run.exited).signal).to.equal('SIGKILL');
    expect(run.output()).to.include('svc-operator: fault injection: killing the orchestrator at restartMember #2 (before)\n');
    expect(apply.code).to.equal(1);
    expect(apply.out.split('\n')[0]).to.equal(`handed the spec over to ${holder(lock)}, which reconciles ${stateDir}; waiting for it to settle (stopping this wait leaves it to local run)`);
    expect(apply.out).to.match(/Z restart lr-\d on 3\.5\.21 \(VersionChange\)\n/);
    expect(apply.out.endsWith(`svc-operator: local run (pid ${lock.pid}) stopped before it settled on the applied spec; the spec is saved in ${stateDir}: start \`svc-operator local run --state-dir ${stateDir}\` again, or run this again\n`)).to.equal(true, apply.out);
    expect(rt.state()!.records.progress).to.include({ from: '3.4.34', to: '3.5.21' });

    // the next local run takes the stale lock over and resumes; local apply beside it waits for the upgrade's end
    const next = await startRun();
    expect(next.run.output().split('\n')[1]).to.match(new RegExp(`^\\S+Z took over the lock of ${holder(lock).replace(/[()[\]`.]/g, '\\$&')}: that process is gone; resuming from the recorded steps$`));
    const again = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
    expect(again.code, again.out).to.equal(0);
    expect(again.out.split('\n')[0]).to.equal(`handed the spec over to ${holder(next.lock)}, which reconciles ${stateDir}; waiting for it to settle (stopping this wait leaves it to local run)`);
    expect(again.out.endsWith('local run settled (steady): every member runs 3.5.21; nothing to do\n')).to.equal(true, again.out);
    expect(next.run.output()).to.match(/Z complete: verified: every member reports 3\.5\.21/);
    for (const m of ['lr-0', 'lr-1', 'lr-2']) expect(starts(m, '3.5.21'), m).to.equal(1);
    for (const m of rt.state()!.members) expect((await mc.version(`http://127.0.0.1:${m.clientPort}`)).etcdserver, m.name).to.equal('3.5.21');
    const metrics = await (await fetch(`${next.url}/metrics`)).text();
    expect(metrics).to.include('svc_operator_upgrade_members_done{namespace="local",cluster="lr"} 3');

    process.kill(next.run.pid, 'SIGTERM');
    const end = await next.run.exited;
    expect(end.code).to.equal(0);
    expect(end.out).to.match(/Z SIGTERM: stopping once the step under way is finished and recorded\n\S+Z stopped; released the lock of .* \(the next `svc-operator local run` or `local apply` carries on\)\n$/);
    expect(existsSync(join(stateDir, 'operator.lock'))).to.equal(false);
  });
});

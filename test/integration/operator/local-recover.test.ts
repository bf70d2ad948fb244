// Quorum-loss recovery with the local runtime against real svc processes (`svc-operator local recover`, its own
// process): refused on a healthy cluster (exit 1, nothing touched); with two of three members killed and their data
// dirs deleted, --dry-run prints the plan and touches nothing; then the recovery (its operator killed once right
// after the survivor's forced start, and run again) brings the cluster back from the survivor: the same names and client URLs, every key the survivor had, 3 voting members, the survivor's member id
// kept and the others joining under new ids, the survivor's snapshot kept where the command said.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Client } from '../../../server/client/index.js';
import { API_VERSION, KIND, type SvcCluster } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import { applyCluster } from '../../../operator/cli/local.js';
import { stateFile } from '../../../operator/runtime/local/state.js';
import { operatorCli } from './operator-cli.js';
import { useLocalRuntime } from './local-fixture.js';

const manifest: SvcCluster = { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'rc' }, spec: withDefaults({ version: '3.5.21', replicas: 3 }) };
const KEYS = 30;

describe('operator local runtime: quorum-loss recovery against real processes', function () {
  this.timeout(180_000);
  const { stateDir, rt, mc } = useLocalRuntime('rc', { timeoutMs: 2000, attempts: 1 });

  it('refuses a healthy cluster, plans without touching, then recovers from the survivor in place', async () => {
    expect((await applyCluster(manifest, { stateDir })).outcome).to.equal('steady');
    const before = rt.state()!;
    const urls = new Map(before.members.map((m) => [m.name, `http://127.0.0.1:${m.clientPort}`]));
    const c = await Client.connect({ endpoints: [...urls.values()] });
    try {
      for (let i = 0; i < KEYS; i++) await c.put(`rec/${i}`, `v${i}`);
    } finally {
      c.close();
    }
    const survivorId = (await mc.status(urls.get('rc-1')!)).id;

    // a cluster with quorum: refused, nothing touched
    const stateText = readFileSync(stateFile(stateDir), 'utf8');
    const healthy = await operatorCli(['local', 'recover', '--state-dir', stateDir]);
    expect(healthy.code, healthy.out).to.equal(1);
    expect(healthy.out).to.match(/cannot recover rc: cluster rc has quorum \(rc-\d leads and is healthy\).*nothing was touched/);
    expect(readFileSync(stateFile(stateDir), 'utf8')).to.equal(stateText);

    // two of three lost: killed, data dirs deleted; rc-1 survives (a member other than the first)
    for (const name of ['rc-0', 'rc-2']) {
      const m = before.members.find((x) => x.name === name)!;
      process.kill(m.pid!, 'SIGKILL');
      rmSync(m.dataDir, { recursive: true, force: true });
    }
    const dry = await operatorCli(['local', 'recover', '--dry-run', '--state-dir', stateDir]);
    expect(dry.code, dry.out).to.equal(0);
    expect(dry.out).to.match(/^rc-0 +no +\? +\? +its data is already gone/m);
    expect(dry.out).to.match(/^rc-1 \(survivor\) +yes +\d+ +\d+ +nothing: its data becomes the cluster's/m);
    expect(dry.out).to.match(/^rc-2 +no +\? +\? +its data is already gone/m);
    expect(dry.out).to.contain('survivor: rc-1 (the highest applied index');
    expect(dry.out).to.contain('dry run: nothing was touched');
    expect(readFileSync(stateFile(stateDir), 'utf8')).to.equal(stateText);
    expect(existsSync(join(stateDir, 'recovery'))).to.equal(false);

    // the loop never hangs on a lost quorum: `local apply` exits 1 at once, saying so, which members are gone and
    // that recover is the way out; `local status` says the same (no "the next apply replaces it")
    const dataDir = (name: string) => before.members.find((x) => x.name === name)!.dataDir;
    const quorumLost = `quorum lost: rc-0 (DataLost: its data dir ${dataDir('rc-0')} is missing), rc-2 (DataLost: its data dir ${dataDir('rc-2')} is missing) lost their data, ` +
      'and the 1 of 3 members left (rc-1) are no majority: no leader can be elected and no write is accepted; replacing a member needs a leader, ' +
      'so nothing is replaced and nothing was changed; the way out is a recovery from the member with the most data: `svc-operator local recover --dry-run` ' +
      '(Kubernetes: `kubectl svc recover <cluster> --dry-run`) shows the survivor and what each member loses, then the same without --dry-run';
    const file = join(stateDir, '..', `rc-${process.pid}.yaml`);
    writeFileSync(file, JSON.stringify(manifest));
    const t0 = Date.now();
    const stuck = await operatorCli(['local', 'apply', '-f', file, '--state-dir', stateDir]);
    rmSync(file, { force: true });
    expect(stuck.code, stuck.out).to.equal(1);
    expect(Date.now() - t0, 'local apply ends within seconds').to.be.below(30_000);
    expect(stuck.out).to.contain(`svc-operator: rc not reconciled: MemberFailed (QuorumLost): ${quorumLost}\n`);
    expect(stuck.out).to.not.contain('ReplacementNotSafe');
    const lostStatus = await operatorCli(['local', 'status', '--state-dir', stateDir]);
    expect(lostStatus.code, lostStatus.out).to.equal(0);
    expect(lostStatus.out).to.contain(`${quorumLost}\n`);
    for (const name of ['rc-0', 'rc-2']) {
      expect(lostStatus.out).to.contain(`${name} cannot come back (DataLost: its data dir ${dataDir(name)} is missing): the quorum is lost, so it is not replaced; \`svc-operator local recover --dry-run\` is the way out\n`);
    }
    expect(lostStatus.out).to.not.contain('replaces it');

    // the operator killed right after the survivor's forced start: the next run resumes, never forcing it again
    const killed = await operatorCli(['local', 'recover', '--state-dir', stateDir], { SVC_OPERATOR_CRASH_AT: 'forceNewCluster:1:acted' });
    expect(killed.signal, killed.out).to.equal('SIGKILL');
    expect(killed.out).to.contain('survivor: rc-1');
    const run = await operatorCli(['local', 'recover', '--state-dir', stateDir]);
    expect(run.code, run.out).to.equal(0);
    expect(run.out).to.match(/^recovery \S+ from rc-1 is under way \(step forceNewCluster\); resuming it$/m);
    const survivorLog = readFileSync(join(stateDir, 'logs', 'rc-1.log'), 'utf8');
    expect(survivorLog.match(/made this member the only one of its cluster/g), 'forced starts of rc-1').to.have.length(1);
    const snap = /snapshot of rc-1 before the recovery: (\S+) /.exec(run.out)?.[1];
    expect(snap, run.out).to.be.a('string');
    expect(existsSync(snap!)).to.equal(true);
    expect(run.out).to.contain('recovered rc from rc-1\'s data: 3 member(s)');

    const status = await operatorCli(['local', 'status', '--state-dir', stateDir]);
    expect(status.code, status.out).to.equal(0);
    expect(status.out).to.match(new RegExp(`^recovery \\S+ from rc-1: finished \\S+; snapshot ${snap!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    const after = rt.state()!;
    expect(after.records.recovery?.snapshot?.location).to.equal(snap);
    expect(after.records.recovery?.finishedAt).to.be.a('number');
    // the same names and client URLs
    expect(after.members.map((m) => [m.name, m.clientPort])).to.deep.equal(before.members.map((m) => [m.name, m.clientPort]));
    const list = await mc.memberList(urls.get('rc-1')!);
    expect(list.map((m) => m.name).sort()).to.deep.equal(['rc-0', 'rc-1', 'rc-2']);
    expect(list.every((m) => !m.isLearner)).to.equal(true);
    expect(list.find((m) => m.name === 'rc-1')!.id).to.equal(survivorId);
    // every key the survivor had, on every member
    for (const [name, url] of urls) {
      const r = await Client.connect({ endpoints: [url] });
      try {
        const got = await r.get('rec/', { prefix: true, serializable: true });
        expect(got.kvs.length, name).to.equal(KEYS);
      } finally {
        r.close();
      }
    }
    const w = await Client.connect({ endpoints: [...urls.values()] });
    try {
      await w.put('rec/after', 'yes');
    } finally {
      w.close();
    }
  });

  it('usage and refusals name the cause: no cluster in the state dir (1), --dry-run elsewhere (2), recover without a cluster name (2)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-op-recover-empty-'));
    try {
      const none = await operatorCli(['local', 'recover', '--dry-run', '--state-dir', empty]);
      expect(none.code, none.out).to.equal(1);
      expect(none.out).to.contain(`no local cluster in ${empty}; name the state dir of the cluster to recover with --state-dir`);
      const misplaced = await operatorCli(['local', 'status', '--dry-run', '--state-dir', empty]);
      expect(misplaced.code, misplaced.out).to.equal(2);
      expect(misplaced.out).to.contain('--dry-run belongs to local recover');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const plugin = fileURLToPath(new URL('../../../../bin/kubectl-svc', import.meta.url));
    const help = spawnSync(process.execPath, [plugin, '--help'], { encoding: 'utf8' });
    expect(help.status).to.equal(0);
    expect(help.stdout).to.contain('kubectl svc recover <cluster> [--namespace NS] [--kubeconfig FILE] [--dry-run]');
    const bad = spawnSync(process.execPath, [plugin, 'recover'], { encoding: 'utf8' });
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.match(/^kubectl svc: kubectl svc recover needs exactly one SvcCluster name\nusage: kubectl svc recover <cluster>/);
  });
});

// Members that lost their data, and clusters that lost their quorum, on real svc clusters:
// (a) a member wiped and restarted with its old flags (--initial-cluster-state new) stops with the reference's
//     "has already been bootstrapped" and never votes: term, leader and member list stay as they were (the
//     reference 3.5 refuses the same member with the same words); so does a member that joined later (existing);
// (b) --force-new-cluster: the one member left of three restarts from its data as the only member, serves every
//     key, and the cluster grows again through a learner that is then promoted; restarted without the flag, the
//     member keeps the new membership.
import { expect } from 'chai';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { useSvcClusters, type SvcCluster } from '../../../harness/svc-cluster.js';
import { sleep, spawnLogged, waitForHttp, type ExitStatus } from '../../../harness/process.js';
import { etcdctl } from '../../../harness/etcdctl.js';
import { memberArgs } from '../../../harness/member-args.js';
import { ref35, startReferenceCluster } from '../../../harness/reference-cluster.js';
import { useCleanup } from '../../../harness/cleanup.js';

interface MemberJson {
  ID: string;
  name?: string;
  isLearner?: boolean;
}

async function memberList(c: SvcCluster, i: number): Promise<MemberJson[]> {
  const a = await c.post(i, '/v3/cluster/member/list', {});
  expect(a.status, a.text).to.equal(200);
  return (a.body.members as MemberJson[]) ?? [];
}

const hex = (decimal: string) => BigInt(decimal).toString(16);

/** Kills member i, empties its data dir and starts it again with its old flags; its exit status, which must come within 20 s. */
async function wipeAndRestart(c: SvcCluster, i: number): Promise<ExitStatus> {
  await c.kill(i);
  rmSync(c.members[i].dataDir, { recursive: true, force: true });
  mkdirSync(c.members[i].dataDir, { mode: 0o700 });
  await c.start(i, { waitHealthy: false });
  const st = await Promise.race([c.members[i].process.exited, sleep(20000).then(() => null)]);
  expect(st, `${c.members[i].name} still running 20 s after a start with an empty data dir`).to.not.equal(null);
  return st!;
}

describe('svc: members that lost their data, clusters that lost their quorum', function () {
  this.timeout(180000);
  const clusters = useSvcClusters();
  const stopLater = useCleanup({ closeAfter: 'each' });

  it('the reference 3.5 refuses a wiped member with the words svc uses', async () => {
    const token = `wiped-${process.pid}`;
    const ref = stopLater(await startReferenceCluster({ size: 3, token, binary: ref35('etcd') }));
    const status = await etcdctl(['endpoint', 'status', '-w', 'json'], { bin: ref35('etcdctl'), endpoints: [ref.endpoints[2]] });
    const id = BigInt(/"member_id":(\d+)/.exec(status.stdout)![1]).toString(16);
    const m = ref.members[2];
    await m.process.stop('SIGKILL', 5000);
    rmSync(m.dataDir, { recursive: true, force: true });
    mkdirSync(m.dataDir, { mode: 0o700 });
    const initialCluster = ref.members.map((x) => `${x.name}=${x.peerUrl}`).join(',');
    const args = memberArgs({ name: m.name, dataDir: m.dataDir, clientUrl: m.clientUrl, peerUrl: m.peerUrl, initialCluster, token, state: 'new' });
    const again = stopLater(spawnLogged(ref35('etcd'), args, { logFile: join(ref.dir, 'wiped.log'), name: 'wiped' }));
    const st = await Promise.race([again.exited, sleep(20000).then(() => null)]);
    expect(st, 'the reference\'s wiped member still runs').to.not.equal(null);
    expect(st!.code).to.not.equal(0);
    expect(again.log()).to.include(`member ${id} has already been bootstrapped`);
  });

  it('a wiped member restarted with its old flags stops ("has already been bootstrapped") and never votes', async () => {
    const c = await clusters.start({ size: 3 });
    for (let i = 0; i < 20; i++) await c.put(0, `wiped/${i}`, `v${i}`);
    const leader = await c.leader();
    const victim = [0, 1, 2].find((i) => i !== leader)!;
    const id = await c.memberId(victim);
    const before = await c.status(leader);
    const listBefore = await memberList(c, leader);

    const st = await wipeAndRestart(c, victim);
    expect(st.code, 'exit code of the wiped member').to.not.equal(0);
    const log = c.currentLog(victim);
    expect(log).to.include(`member ${hex(id)} has already been bootstrapped`);
    expect(log).to.include('lost its data');
    expect(log).to.include(`member remove ${hex(id)}`);
    expect(readdirSync(c.members[victim].dataDir), 'the wiped data dir stays empty').to.deep.equal([]);

    // The others never saw it vote: same leader, same term, same members.
    expect(await c.leader()).to.equal(leader);
    const after = await c.status(leader);
    expect((after.header as { raft_term: string }).raft_term).to.equal((before.header as { raft_term: string }).raft_term);
    expect(await memberList(c, leader)).to.deep.equal(listBefore);
    await c.put(leader, 'wiped/after', 'ok');
    expect(await c.get([0, 1, 2].find((i) => i !== leader && i !== victim)!, 'wiped/after')).to.equal('ok');
  });

  it('a wiped member that joined with --initial-cluster-state existing is refused the same way (no rejoin under its old ID)', async () => {
    const c = await clusters.start({ size: 1 });
    await c.put(0, 'joined/k', 'v');
    const n = await c.addMember(); // started with --initial-cluster-state existing
    const id = await c.memberId(n);
    await c.put(0, 'joined/k2', 'v2');
    // it has started once the cluster lists its name (its published attributes): only then is it known to have had
    // data; killed before, it is a member that never ran, and it may join again
    for (let t = 0; !(await memberList(c, 0)).some((m) => hex(m.ID) === hex(id) && m.name); t++) {
      if (t > 100) expect.fail(`${c.members[n].name} never published its name`);
      await sleep(100);
    }
    const st = await wipeAndRestart(c, n);
    expect(st.code).to.not.equal(0);
    expect(c.currentLog(n)).to.include(`member ${hex(id)} has already been bootstrapped`);
    expect(readdirSync(c.members[n].dataDir), 'the wiped data dir stays empty').to.deep.equal([]);
  });

  it('the reference 3.5 under --force-new-cluster logs the lines svc logs and keeps its keys as the only member', async () => {
    const token = `forced-${process.pid}`;
    const ref = stopLater(await startReferenceCluster({ size: 3, token, binary: ref35('etcd') }));
    const ctl = (args: string[]) => etcdctl(args, { bin: ref35('etcdctl'), endpoints: [ref.endpoints[0]] });
    expect((await ctl(['put', 'forced/k', 'v'])).code).to.equal(0);
    // The survivor keeps only what it knows committed: wait until it applied the write.
    for (let i = 0; (await ctl(['get', 'forced/k', '--consistency=s', '--print-value-only'])).stdout.trim() !== 'v'; i++) {
      if (i > 50) expect.fail('ref0 never applied forced/k');
      await sleep(100);
    }
    await sleep(500);
    for (const x of ref.members) await x.process.stop('SIGKILL', 5000);
    const m = ref.members[0];
    const initialCluster = ref.members.map((x) => `${x.name}=${x.peerUrl}`).join(',');
    const args = [...memberArgs({ name: m.name, dataDir: m.dataDir, clientUrl: m.clientUrl, peerUrl: m.peerUrl, initialCluster, token, state: 'new' }), '--force-new-cluster'];
    const forced = stopLater(spawnLogged(ref35('etcd'), args, { logFile: join(ref.dir, 'forced.log'), name: 'forced' }));
    await waitForHttp(`${m.clientUrl}/health`, { timeoutMs: 30000, process: forced });
    expect(forced.log()).to.include('"msg":"forcing restart member"');
    const got = await ctl(['get', 'forced/k', '--print-value-only']);
    expect(got.stdout.trim(), got.stderr).to.equal('v');
    expect((await ctl(['member', 'list'])).stdout.trim().split('\n')).to.have.length(1);
  });

  it('--force-new-cluster: the last member of three serves every key alone, then grows through a learner', async () => {
    // Small snapshots: the forced restart starts from a consensus snapshot, and the learner catches up from one.
    const c = await clusters.start({ size: 3, extraArgs: ['--snapshot-count=10'] });
    const keys = 40;
    for (let i = 0; i < keys; i++) await c.put(i % 3, `forced/${String(i).padStart(2, '0')}`, `value-${i}`);
    const id = await c.memberId(0);
    // The survivor keeps only what it knows committed: wait until it applied the last write.
    for (let i = 0; (await c.get(0, `forced/${keys - 1}`, { serializable: true })) !== `value-${keys - 1}`; i++) {
      if (i > 50) expect.fail('m1 never applied the last write');
      await sleep(100);
    }
    await sleep(500);
    // Two members gone for good: quorum lost.
    await c.kill(1);
    await c.kill(2);
    c.members[1].removed = true;
    c.members[2].removed = true;
    await c.kill(0);

    await c.start(0, { extraArgs: ['--force-new-cluster'] });
    const log = c.currentLog(0);
    expect(log).to.include('"msg":"forcing restart member"');
    expect(log).to.include('remove the flag from its command line before its next restart');
    const list = await memberList(c, 0);
    expect(list.map((m) => m.ID)).to.deep.equal([id]);
    const kvs = await c.range(0, 'forced/');
    expect(kvs.map((kv) => kv.value)).to.deep.equal(Array.from({ length: keys }, (_, i) => `value-${i}`));
    await c.put(0, 'forced/after', 'alone');

    // Grow again: a learner first, promoted once it caught up.
    const n = await c.addMember({ isLearner: true });
    const grown = await memberList(c, 0);
    expect(grown).to.have.length(2);
    expect(grown.find((m) => m.ID !== id)?.isLearner).to.equal(true);
    const newId = await c.memberId(n);
    for (const deadline = Date.now() + 20000; ; ) {
      const a = await c.post(0, '/v3/cluster/member/promote', { ID: newId });
      if (a.status === 200) break;
      expect(a.text).to.include('in sync with leader');
      if (Date.now() > deadline) expect.fail(`the learner was never promoted: ${a.text}`);
      await sleep(300);
    }
    expect((await memberList(c, 0)).every((m) => !m.isLearner)).to.equal(true);
    expect(await c.get(n, 'forced/after')).to.equal('alone');
    expect(await c.get(n, 'forced/07')).to.equal('value-7');
    await c.put(n, 'forced/two', 'voters');
    expect(await c.get(0, 'forced/two')).to.equal('voters');
    expect(c.members[0].crashes).to.deep.equal([]);

    // Restarted without the flag, it keeps the new membership.
    await c.stop(0);
    await c.start(0);
    await c.waitHealthy();
    expect((await memberList(c, 0)).map((m) => m.ID).sort()).to.deep.equal([id, newId].sort());
    expect(await c.get(0, 'forced/two')).to.equal('voters');
  });
});

// Clusters of 1, 3 and 5 real svc processes on loopback: they bootstrap, elect exactly one leader, and a write
// through any member is read back from every member, with linearizable and with serializable reads.
import { expect } from 'chai';
import { useSvcClusters, type SvcCluster } from '../../../harness/svc-cluster.js';
import { httpGet, sleep } from '../../../harness/process.js';

/** Serializable reads are local: poll until the member has applied the write. */
async function eventuallyLocal(c: SvcCluster, i: number, key: string, want: string): Promise<void> {
  const deadline = Date.now() + 10000;
  for (;;) {
    const got = await c.get(i, key, { serializable: true });
    if (got === want) return;
    if (Date.now() > deadline) expect(got, `serializable read of ${key} on ${c.members[i].name}`).to.equal(want);
    await sleep(100);
  }
}

async function leaderFlags(c: SvcCluster): Promise<number[]> {
  const flags: number[] = [];
  for (const m of c.members) {
    const body = (await httpGet(`${m.clientURL}/metrics`)).body;
    const match = /^svc_server_is_leader (\d+)$/m.exec(body);
    expect(match, `svc_server_is_leader on ${m.name}`).to.not.equal(null);
    flags.push(Number(match![1]));
  }
  return flags;
}

describe('svc cluster: bootstrap and replication', function () {
  this.timeout(90000);
  const clusters = useSvcClusters();

  it('a 3-member cluster elects exactly one leader and every member sees every write', async () => {
    const c = await clusters.start({ size: 3 });
    const leader = await c.leader();
    const flags = await leaderFlags(c);
    expect(flags.filter((f) => f === 1), 'members reporting svc_server_is_leader 1').to.have.length(1);
    expect(flags[leader]).to.equal(1);
    // Every member agrees on who leads.
    const leaderId = await c.memberId(leader);
    for (let i = 0; i < 3; i++) expect((await c.status(i)).leader, `leader seen by ${c.members[i].name}`).to.equal(leaderId);

    for (let w = 0; w < 3; w++) {
      const key = `basic/written-via-${c.members[w].name}`;
      await c.put(w, key, `value-${w}`);
      for (let r = 0; r < 3; r++) {
        expect(await c.get(r, key), `linearizable read of ${key} on ${c.members[r].name}`).to.equal(`value-${w}`);
        await eventuallyLocal(c, r, key, `value-${w}`);
      }
    }
    // An overwrite through a follower is seen by a linearizable read on another member right away.
    const follower = [0, 1, 2].find((i) => i !== leader)!;
    const other = [0, 1, 2].find((i) => i !== leader && i !== follower)!;
    await c.put(follower, 'basic/overwritten', 'one');
    await c.put(follower, 'basic/overwritten', 'two');
    expect(await c.get(other, 'basic/overwritten')).to.equal('two');
    expect(await c.get(leader, 'basic/overwritten')).to.equal('two');
    const all = await c.range(other, 'basic/');
    expect(all.map((kv) => kv.key)).to.deep.equal(['basic/overwritten', 'basic/written-via-m1', 'basic/written-via-m2', 'basic/written-via-m3']);

    // Without a quorum the survivor reports itself unhealthy (503, no leader) but still answers local reads.
    await c.kill(follower);
    await c.kill(other);
    const deadline = Date.now() + 20000;
    let health = await httpGet(`${c.members[leader].clientURL}/health`);
    while (health.status === 200 && Date.now() < deadline) {
      await sleep(250);
      health = await httpGet(`${c.members[leader].clientURL}/health`);
    }
    expect(health.status, `/health without quorum: ${health.body}`).to.equal(503);
    expect(JSON.parse(health.body).health).to.equal('false');
    expect(await c.get(leader, 'basic/overwritten', { serializable: true })).to.equal('two');
  });

  it('a 1-member cluster is its own leader and serves reads and writes', async () => {
    const c = await clusters.start({ size: 1 });
    expect(await c.leader()).to.equal(0);
    await c.put(0, 'single/a', '1');
    expect(await c.get(0, 'single/a')).to.equal('1');
    expect(await c.get(0, 'single/a', { serializable: true })).to.equal('1');
    // It survives a restart with its data.
    await c.stop(0);
    await c.start(0);
    expect(await c.get(0, 'single/a')).to.equal('1');
  });

  it('a 5-member cluster elects one leader and replicates to all five', async () => {
    const c = await clusters.start({ size: 5 });
    await c.leader();
    const flags = await leaderFlags(c);
    expect(flags.filter((f) => f === 1)).to.have.length(1);
    await c.put(4, 'five/k', 'v');
    for (let r = 0; r < 5; r++) {
      expect(await c.get(r, 'five/k'), `linearizable read on ${c.members[r].name}`).to.equal('v');
      await eventuallyLocal(c, r, 'five/k', 'v');
    }
    // Two members down: still a quorum of three.
    await c.kill(3);
    await c.kill(4);
    await c.waitHealthy();
    await c.put(0, 'five/after-two-down', 'ok');
    expect(await c.get(2, 'five/after-two-down')).to.equal('ok');
  });
});

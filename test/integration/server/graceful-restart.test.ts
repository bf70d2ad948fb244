// Graceful stop and restart as the rolling upgrade does them: SIGTERM of the leader hands leadership to another
// member first (new leader, higher term, clean exit); members restarted one by one on the next release keep
// their data, the cluster version stays at the old release while members are mixed and moves up once all
// members run the new one.
import { expect } from 'chai';
import { useSvcClusters, type SvcCluster } from '../../../harness/svc-cluster.js';
import { httpGet, sleep } from '../../../harness/process.js';

async function version(c: SvcCluster, i: number): Promise<{ etcdserver: string; etcdcluster: string }> {
  return JSON.parse((await httpGet(`${c.members[i].clientURL}/version`)).body) as { etcdserver: string; etcdcluster: string };
}

describe('svc graceful stop and release restart', function () {
  this.timeout(120000);
  const clusters = useSvcClusters({ closeAfter: 'all' });

  it('SIGTERM of the leader transfers leadership before it exits', async () => {
    const c = await clusters.start({ size: 3, version: '3.4.34', extraArgs: ['--logger=zap'] });
    await c.put(0, 'rolling/before', 'x');
    const leader = await c.leader();
    const oldTerm = Number((await c.status(leader)).raftTerm);
    const st = await c.stop(leader);
    expect(st, 'exit status after SIGTERM').to.deep.equal({ code: 0, signal: null });
    const log = c.currentLog(leader);
    expect(log).to.match(/leadership transfer starting/);
    expect(log).to.match(/leadership transfer finished/);
    const next = await c.leader();
    expect(next).to.not.equal(leader);
    expect(Number((await c.status(next)).raftTerm)).to.be.greaterThan(oldTerm);
    await c.start(leader);
  });

  it('members restarted one by one on 3.5 keep their data; the cluster version moves only when all are 3.5', async () => {
    const c = clusters.last();
    const order = [0, 1, 2];
    for (const [step, i] of order.entries()) {
      await c.stop(i);
      await c.start(i, { version: '3.5.21' });
      await c.waitHealthy();
      expect(await c.get(i, 'rolling/before')).to.equal('x');
      await c.put(i, `rolling/step${step}`, String(step));
      const v = await version(c, i);
      expect(v.etcdserver).to.equal('3.5.21');
      if (step < order.length - 1) {
        for (let j = 0; j < 3; j++) expect((await version(c, j)).etcdcluster, `cluster version seen by ${c.members[j].name} while mixed`).to.equal('3.4.0');
      }
    }
    const deadline = Date.now() + 30000;
    for (;;) {
      const seen = await Promise.all([0, 1, 2].map((j) => version(c, j)));
      if (seen.every((v) => v.etcdcluster === '3.5.0')) break;
      if (Date.now() > deadline) expect.fail(`cluster version never reached 3.5.0: ${JSON.stringify(seen)}`);
      await sleep(500);
    }
    for (let j = 0; j < 3; j++) expect((await c.range(j, 'rolling/')).map((kv) => kv.key)).to.deep.equal(['rolling/before', 'rolling/step0', 'rolling/step1', 'rolling/step2']);
  });
});

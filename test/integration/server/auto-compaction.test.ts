// --auto-compaction-mode / --auto-compaction-retention: the leader compacts on its own, as the reference's
// revision and periodic compactors do. Checked from outside: a read at an old revision starts failing with
// "required revision has been compacted", while the retained window stays readable.
import { strict as assert } from 'node:assert';
import { b64, useSvcClusters, type SvcCluster } from '../../../harness/svc-cluster.js';

async function compactedAt(cluster: SvcCluster, revision: number): Promise<boolean> {
  const a = await cluster.post(0, '/v3/kv/range', { key: b64('ac/k'), revision });
  if (a.status === 200) return false;
  assert.match(a.text, /required revision has been compacted/);
  return true;
}

async function waitCompacted(cluster: SvcCluster, revision: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await compactedAt(cluster, revision))) {
    assert.ok(Date.now() < deadline, `revision ${revision} was not compacted within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('auto compaction (integration)', function () {
  this.timeout(90000);
  const clusters = useSvcClusters();

  it('revision mode keeps the last N revisions', async () => {
    const cluster = await clusters.start({
      size: 3,
      extraArgs: ['--auto-compaction-mode=revision', '--auto-compaction-retention=10'],
      env: { SVC_AUTO_COMPACTION_REVISION_INTERVAL_MS: '200' },
    });
    let last = 0;
    for (let i = 0; i < 30; i++) last = await cluster.put(0, 'ac/k', `v${i}`);
    await waitCompacted(cluster, last - 15, 20000);
    assert.equal(await compactedAt(cluster, last - 5), false);
    const leader = await cluster.leader();
    await cluster.waitForLog(leader, /"msg":"completed auto revision compaction"/);
  });

  it('periodic mode compacts to the revision of one period ago', async () => {
    const cluster = await clusters.start({ size: 1, extraArgs: ['--auto-compaction-retention=2s'] });
    const first = await cluster.put(0, 'ac/k', 'v0');
    for (let i = 1; i < 10; i++) await cluster.put(0, 'ac/k', `v${i}`);
    // Reads below the compacted revision fail: the first write's revision goes once the samples move past it.
    await waitCompacted(cluster, first, 30000);
    await cluster.waitForLog(0, /"msg":"completed auto periodic compaction"/);
  });
});

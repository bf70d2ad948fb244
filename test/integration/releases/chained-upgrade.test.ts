import { expect } from 'chai';
import { printLogsOnFailure, startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';
import { V33, V34, V35, versionsOf, waitClusterVersion } from './helpers.js';

describe('releases: chained rolling upgrade 3.3 -> 3.4 -> 3.5 on one cluster', function () {
  this.timeout(180000);
  let c: SvcCluster;
  printLogsOnFailure(() => [c]);
  after(async () => c?.close());

  it('every member reaches 3.5.21 with cluster version 3.5.0, data intact', async function () {
    c = await startSvcCluster({ size: 3, version: V33, timeoutMs: 60000 });
    await c.put(0, 'data/a', 'alpha');
    for (const to of [V34, V35]) {
      for (const i of [0, 1, 2]) {
        await c.stop(i);
        await c.start(i, { version: to, extraArgs: ['--logger=zap', '--log-outputs=stderr'] }); // fails here for 3.5
        await c.waitHealthy(60000);
      }
      await waitClusterVersion(c, `${to.split('.').slice(0, 2).join('.')}.0`);
    }
    for (const [i, v] of await versionsOf(c)) expect(v, c.members[i].name).to.deep.equal({ etcdserver: V35, etcdcluster: '3.5.0' });
    for (const i of [0, 1, 2]) expect(await c.get(i, 'data/a')).to.equal('alpha');
  });
});

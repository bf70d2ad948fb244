// A member started with --initial-cluster-state existing takes its member id and the cluster id from the running
// members (their /members answer), whatever --initial-cluster-token it was given, as the reference does: the
// token only seeds the ids of a new cluster. Here the new member's token differs from the cluster's, and it still
// joins, replicates and serves.
import { expect } from 'chai';
import { startSvcCluster, type SvcCluster } from '../../../harness/svc-cluster.js';

describe('joining an existing cluster with a different --initial-cluster-token', function () {
  this.timeout(180000);
  let cluster: SvcCluster | undefined;
  after(async () => {
    await cluster?.close();
  });

  it('the added member gets the ids the cluster assigned, joins and serves', async () => {
    cluster = await startSvcCluster({ size: 3, version: '3.4.34', token: 'the-clusters-token' });
    await cluster.put(0, 'before', 'join');
    const i = await cluster.addMember({ extraArgs: ['--initial-cluster-token=another-token'] });
    // the id the new member runs with is the one member add returned to the cluster
    const listed = await cluster.post(0, '/v3/cluster/member/list', {});
    const members = listed.body.members as Array<{ ID: string; name: string; peerURLs: string[] }>;
    expect(members).to.have.length(4);
    const mine = members.find((m) => m.peerURLs.includes(cluster!.members[i].peerURL));
    expect(mine?.ID).to.equal(await cluster.memberId(i));
    const status = await cluster.status(i);
    const header0 = (await cluster.status(0)).header as { cluster_id: string };
    expect((status.header as { cluster_id: string }).cluster_id).to.equal(header0.cluster_id);
    // it replicates: a write through it, reads of the old and new keys on it and on the others
    await cluster.put(i, 'after', 'join');
    expect(await cluster.get(i, 'before')).to.equal('join');
    for (const j of [0, 1, 2, i]) expect(await cluster.get(j, 'after')).to.equal('join');
    expect(cluster.currentLog(i)).to.not.match(/ID mismatch/);
    for (const j of [0, 1, 2]) expect(cluster.currentLog(j)).to.not.match(/cluster ID mismatch/);
    // and after a restart (same flags) it is the same member
    await cluster.stop(i);
    await cluster.put(0, 'while', 'down');
    await cluster.start(i);
    expect(await cluster.memberId(i)).to.equal(mine?.ID);
    expect(await cluster.get(i, 'while')).to.equal('down');
  });
});

// The version monitor's decision and round, with members' versions given by a fake fetcher: the leader moves
// the cluster version up to the lowest member version; a follower never proposes; nothing moves it down.
import { expect } from 'chai';
import type { Member } from '../../../server/cluster/membership.js';
import { VersionMonitor, clusterVersionToSet } from '../../../server/core/version-monitor.js';
import { MemberLifecycle } from '../../../server/core/lifecycle.js';
import { nopLogger } from '../../../server/log/logger.js';

const member = (id: bigint): Member => ({ id, name: `m${id}`, peerURLs: [`http://127.0.0.1:${id}`], clientURLs: [], isLearner: false });

function setup(versions: Record<string, string | undefined>, o: { leader: boolean; current?: string }) {
  const proposed: string[] = [];
  const lifecycle = new MemberLifecycle();
  const monitor = new VersionMonitor({
    memberId: 1n,
    localVersion: '3.5.21',
    logger: nopLogger,
    lifecycle,
    api: 'v2',
    members: () => [member(1n), member(2n), member(3n)],
    isLeader: () => o.leader,
    clusterVersion: () => o.current,
    fetchVersion: async (m) => versions[String(m.id)],
    proposeClusterVersion: async (v) => {
      proposed.push(v);
    },
  });
  return { monitor, proposed, lifecycle };
}

describe('core/version-monitor', () => {
  it('decides: the lowest member version, upward only; the floor while a member is unknown and none is set', () => {
    expect(clusterVersionToSet(undefined, ['3.5.21', '3.4.23'])).to.deep.equal({ version: '3.4', initial: true });
    expect(clusterVersionToSet('3.4', ['3.5.21', '3.5.0'])).to.deep.equal({ version: '3.5', initial: false });
    expect(clusterVersionToSet('3.5', ['3.5.21', '3.4.23'])).to.equal(undefined);
    expect(clusterVersionToSet('3.4', ['3.5.21', undefined])).to.equal(undefined);
    expect(clusterVersionToSet(undefined, ['3.5.21', undefined])).to.deep.equal({ version: '3.0', initial: true });
  });

  it('the leader proposes the new cluster version once every member runs the newer release', async () => {
    const { monitor, proposed } = setup({ '2': '3.5.21', '3': '3.5.0' }, { leader: true, current: '3.4' });
    await monitor.check();
    expect(proposed).to.deep.equal(['3.5']);
    expect([...monitor.memberVersions().entries()]).to.deep.equal([[1n, '3.5.21'], [2n, '3.5.21'], [3n, '3.5.0']]);
  });

  it('a follower only records the versions', async () => {
    const { monitor, proposed } = setup({ '2': '3.5.21', '3': '3.5.21' }, { leader: false, current: '3.4' });
    await monitor.check();
    expect(proposed).to.deep.equal([]);
    expect(monitor.memberVersions().get(3n)).to.equal('3.5.21');
  });

  it('a lagging member keeps the cluster version where it is', async () => {
    const { monitor, proposed } = setup({ '2': '3.4.23', '3': '3.5.21' }, { leader: true, current: '3.4' });
    await monitor.check();
    expect(proposed).to.deep.equal([]);
  });

  it('a stopping member checks nothing', async () => {
    const { monitor, proposed, lifecycle } = setup({ '2': '3.5.21', '3': '3.5.21' }, { leader: true, current: '3.4' });
    lifecycle.stopping = true;
    await monitor.check();
    expect(proposed).to.deep.equal([]);
    expect(monitor.memberVersions().size).to.equal(0);
  });
});

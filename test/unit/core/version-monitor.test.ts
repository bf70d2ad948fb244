// The version monitor's decision and round, with members' versions given by a fake fetcher: the leader moves
// the cluster version up to the lowest member version; a follower never proposes; nothing moves it down.
import { expect } from 'chai';
import type { Member } from '../../../server/cluster/membership.js';
import { VersionMonitor, clusterVersionToSet } from '../../../server/core/version-monitor.js';
import { MemberLifecycle } from '../../../server/core/lifecycle.js';
import { nopLogger } from '../../../server/log/logger.js';
import { NO_DOWNGRADE, type DowngradeInfo } from '../../../server/cluster/downgrade.js';

const member = (id: bigint): Member => ({ id, name: `m${id}`, peerURLs: [`http://127.0.0.1:${id}`], clientURLs: [], isLearner: false });

function setup(versions: Record<string, string | undefined>, o: { leader: boolean; current?: string; job?: DowngradeInfo; local?: string }) {
  const proposed: string[] = [];
  const cancels: number[] = [];
  const lifecycle = new MemberLifecycle();
  const monitor = new VersionMonitor({
    memberId: 1n,
    localVersion: o.local ?? '3.5.21',
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
    downgrade: () => o.job ?? NO_DOWNGRADE,
    cancelDowngrade: async () => void cancels.push(1),
  });
  return { monitor, proposed, cancels, lifecycle };
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

  describe('while a downgrade to 3.5 is enabled', () => {
    const job = { enabled: true, targetVersion: '3.5.0' };

    it('the leader lowers the cluster version once every member runs 3.6, and never raises it', async () => {
      const a = setup({ '2': '3.6.16', '3': '3.6.1' }, { leader: true, current: '3.6', job, local: '3.6.16' });
      await a.monitor.check();
      expect(a.proposed).to.deep.equal(['3.5']);
      // a member already below the cluster version (refused, logged), or one unreachable: wait
      for (const v of ['3.5.21', undefined]) {
        const b = setup({ '2': '3.6.16', '3': v }, { leader: true, current: '3.6', job, local: '3.6.16' });
        await b.monitor.check();
        expect(b.proposed).to.deep.equal([]);
      }
      const c = setup({ '2': '3.6.16', '3': '3.5.21' }, { leader: true, current: '3.5', job, local: '3.6.16' });
      await c.monitor.check();
      expect(c.proposed).to.deep.equal([]);
    });

    it('the leader ends the job once every member runs 3.5; a follower never does', async () => {
      const a = setup({ '2': '3.5.21', '3': '3.5.0' }, { leader: true, current: '3.5', job, local: '3.5.21' });
      await a.monitor.checkDowngrade();
      expect(a.cancels).to.have.length(1);
      const b = setup({ '2': '3.5.21', '3': '3.6.16' }, { leader: true, current: '3.5', job, local: '3.5.21' });
      await b.monitor.checkDowngrade();
      expect(b.cancels).to.have.length(0);
      const c = setup({ '2': '3.5.21', '3': '3.5.0' }, { leader: false, current: '3.5', job, local: '3.5.21' });
      await c.monitor.checkDowngrade();
      expect(c.cancels).to.have.length(0);
    });
  });
});

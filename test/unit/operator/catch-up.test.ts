// The catch-up gate: a follower is compared with a leader index read before its own (one observation), and the
// allowed gap follows the write rate, so the gate opens for a healthy follower at hundreds of writes per second
// (a fixed 100 entries would never open when replication trails by a few hundred ms) and stays shut for one
// that really is behind.
import { expect } from 'chai';
import type { SvcClusterSpec } from '../../../operator/api/types.js';
import { withDefaults } from '../../../operator/api/validate.js';
import type { MemberStatusInfo } from '../../../operator/members/index.js';
import type { MemberApi } from '../../../operator/orchestrator/member-api.js';
import { memoryRecords } from '../../../operator/runtime/memory-records.js';
import { newMemory, runPass } from '../../../operator/orchestrator/engine.js';
import { observe } from '../../../operator/orchestrator/observe.js';
import type { Runtime, RuntimeMember } from '../../../operator/runtime/runtime.js';
import { catchUpSlack, plan } from '../../../operator/planner/plan.js';
import type { ObservedCluster, ObservedMember } from '../../../operator/planner/types.js';

const V = '3.4.34';
const spec: SvcClusterSpec = withDefaults({ version: V, replicas: 3 });
/** A spec with a change to carry out (an upgrade, whose first step is the snapshot): the gate decides whether it starts. */
const upgrade: SvcClusterSpec = withDefaults({ version: '3.5.21', replicas: 3 });

const member = (name: string, appliedIndex: number, leader = false): ObservedMember =>
  ({ name, id: name, configuredVersion: V, running: true, release: V, clusterVersion: '3.4.0', healthy: true, leader, appliedIndex });

describe('operator catch-up gate', () => {
  describe('planner', () => {
    const o = (follower: number, catchUp?: ObservedCluster['catchUp']): ObservedCluster =>
      ({ now: 1, authEnabled: false, members: [member('m0', 10_000, true), member('m1', follower), member('m2', 9_990)], ...(catchUp ? { catchUp } : {}) });

    it('without a rate: a fixed gap of 100 entries', () => {
      expect(plan(upgrade, o(9_950), undefined).kind).to.equal('snapshot');
      expect(plan(upgrade, o(9_850), undefined)).to.include({ kind: 'wait', code: 'CatchingUp' });
    });

    it('at 500 writes/s: a follower 300 entries behind is caught up, one 1000 behind is not', () => {
      expect(catchUpSlack(o(0, { leaderIndex: 10_000, ratePerSecond: 500 }))).to.equal(500);
      expect(plan(upgrade, o(9_700, { leaderIndex: 10_000, ratePerSecond: 500 }), undefined).kind).to.equal('snapshot');
      const step = plan(upgrade, o(9_000, { leaderIndex: 10_000, ratePerSecond: 500 }), undefined);
      expect(step).to.include({ kind: 'wait', code: 'CatchingUp' });
      expect((step as { reason: string }).reason).to.equal('member m1 is catching up (applied 9000, leader 10000, allowed gap 500)');
    });

    it('compares with the leader index read before the followers, not the leader\'s newer own', () => {
      // the leader reports 10 500 (read last), but the followers were compared with the 10 000 read before them
      const obs: ObservedCluster = { now: 1, authEnabled: false, members: [member('m0', 10_500, true), member('m1', 9_950), member('m2', 9_990)], catchUp: { leaderIndex: 10_000, ratePerSecond: 0 } };
      expect(plan(upgrade, obs, undefined).kind).to.equal('snapshot');
    });

    it('with nothing to change, a follower behind is no reason to wait: the cluster is steady', () => {
      expect(plan(spec, o(9_000, { leaderIndex: 10_000, ratePerSecond: 500 }), undefined).kind).to.equal('steady');
      expect(plan({ ...spec, replicas: 4 }, { ...o(9_000), clusterMembers: [] , clusterMembersByLeader: true }, undefined)).to.include({ kind: 'wait', code: 'CatchingUp' });
    });
  });

  describe('observation', () => {
    /** Members whose applied indexes follow a clock: the leader at `rate`/s, followers trailing by `lagMs` (or stuck). */
    function cluster(rate: number, lagMs: Record<string, number | 'stuck'>) {
      let now = 0;
      const calls: string[] = [];
      const index = (name: string): number => {
        const lag = lagMs[name] ?? 0;
        return lag === 'stuck' ? 1_000 : Math.max(0, Math.floor(((now - lag) / 1000) * rate) + 1_000);
      };
      const name = (url: string) => url.slice('fake://'.length);
      const client: MemberApi = {
        version: async () => ({ etcdserver: V, etcdcluster: '3.4.0' }),
        healthy: async () => true,
        isLeader: async (url: string) => name(url) === 'm0',
        status: async (url: string): Promise<MemberStatusInfo> => {
          now += 5; // each call takes 5 ms while writes go on
          calls.push(name(url));
          const i = index(name(url));
          return { id: name(url), leader: 'm0', raftIndex: i, appliedIndex: i, dbSize: 1, revision: 1 };
        },
        authEnabled: async () => false,
        memberList: async () => { throw new Error('not used'); },
        memberPromote: async () => { throw new Error('not used'); },
        memberAdd: async () => { throw new Error('not used'); },
        memberRemove: async () => { throw new Error('not used'); },
        moveLeader: async () => { throw new Error('not used'); },
        snapshot: async () => { throw new Error('not used'); },
      };
      const runtime: Runtime = {
        kind: 'fake',
        capabilities: [],
        members: async (): Promise<RuntimeMember[]> => ['m0', 'm1', 'm2'].map((n) => ({ name: n, clientURL: `fake://${n}`, configuredVersion: V, running: true })),
        createCluster: async () => undefined,
        restartMember: async () => undefined,
        snapshotLocation: () => '',
        pruneSnapshots: async () => [],
        records: memoryRecords(),
        v2DataBytes: async () => 0,
      };
      return { client, runtime, calls, clock: () => now, advance: (ms: number) => { now += ms; } };
    }

    it('at 600 writes/s with followers trailing by 250 ms (150 entries) the gate opens; the leader is read before the followers', async () => {
      const c = cluster(600, { m1: 250, m2: 100 });
      const { cluster: o } = await observe(c.runtime, c.client, c.clock);
      // the second round: the leader first, then the followers
      const second = c.calls.slice(3);
      expect(second[0]).to.equal('m0');
      expect(second.slice(1).sort()).to.deep.equal(['m1', 'm2']);
      // (the rate within one observation, over a few milliseconds, is rough: the engine measures it across passes)
      expect(o.catchUp!.ratePerSecond).to.be.within(400, 800);
      expect(o.catchUp!.leaderIndex - o.members.find((m) => m.name === 'm1')!.appliedIndex!).to.be.above(100); // a fixed 100 would not open
      expect(plan(upgrade, o, undefined).kind).to.equal('snapshot');
    });

    it('a follower that does not advance keeps the gate shut at the same rate', async () => {
      const c = cluster(600, { m1: 'stuck', m2: 100 });
      c.advance(3000); // m1 falls further behind
      const { cluster: o } = await observe(c.runtime, c.client, c.clock);
      expect(plan(upgrade, o, undefined)).to.include({ kind: 'wait', code: 'CatchingUp' });
    });

    it('the engine measures the rate across passes: 600 writes/s over a second, and with that rate the gate opens', async () => {
      const c = cluster(600, { m1: 250, m2: 100 });
      const memory = newMemory();
      await runPass(c.runtime, spec, c.client, memory, { clock: c.clock });
      c.advance(1000);
      const r = await runPass(c.runtime, spec, c.client, memory, { clock: c.clock });
      expect(r.observed.catchUp!.ratePerSecond).to.be.within(590, 610);
      expect(r.step.kind).to.equal('steady');
      expect(plan(upgrade, r.observed, undefined).kind).to.equal('snapshot');
    });
  });
});

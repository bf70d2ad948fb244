// Membership changes and their checks without a cluster: strict reconfiguration (started voters, connected
// peers), learner promotion only by the leader once caught up, and what is proposed.
import { expect } from 'chai';
import { ConfChangeType } from '../../../server/raft/types.js';
import { Membership, type Member } from '../../../server/cluster/membership.js';
import { HEALTH_INTERVAL_MS, Reconfig, readyToAddVoter } from '../../../server/core/reconfig.js';
import { Errors } from '../../../server/core/errors.js';
import { nopLogger } from '../../../server/log/logger.js';

const NOW = 1_000_000;
const m = (id: bigint, name = `m${id}`, isLearner = false): Member => ({ id, name, peerURLs: [`http://127.0.0.1:${id}`], clientURLs: [], isLearner });

function setup(members: Member[], o: { leader?: boolean; connectedSince?: Record<string, number>; progress?: Map<bigint, { match: number }>; strict?: boolean; rule?: 'all-voters' | 'quorum-with-new' } = {}) {
  const membership = new Membership(9n);
  for (const x of members) membership.add(x);
  const proposed: Array<{ type: ConfChangeType; id: bigint; member: Partial<Member> }> = [];
  const forwarded: bigint[] = [];
  const r = new Reconfig({
    memberId: 1n,
    logger: nopLogger,
    initialClusterToken: 't',
    strictReconfigCheck: o.strict ?? true,
    addMemberConnected: o.rule ?? 'all-voters',
    membership: () => membership,
    isLeader: () => o.leader ?? true,
    progress: () => o.progress,
    activeSince: (id) => o.connectedSince?.[String(id)],
    proposeConfChange: async (type, id, member) => {
      proposed.push({ type, id, member });
      return membership.list();
    },
    promoteOnLeader: async (id) => {
      forwarded.push(id);
      return membership.list();
    },
    now: () => NOW,
  });
  return { r, proposed, forwarded };
}

const rejects = async (p: Promise<unknown>, e: Error) => {
  const got = await p.then(() => undefined, (x: Error) => x);
  expect(got?.message).to.equal(e.message);
};

describe('core/reconfig', () => {
  it('a voter joins only while enough voters have started (the 1-member exception included)', () => {
    expect(readyToAddVoter([m(1n)])).to.equal(true);
    expect(readyToAddVoter([m(1n), m(2n, '')])).to.equal(false);
    expect(readyToAddVoter([m(1n), m(2n), m(3n, '')])).to.equal(false);
    expect(readyToAddVoter([m(1n), m(2n), m(3n), m(4n, '')])).to.equal(true);
    expect(readyToAddVoter([m(1n), m(2n, ''), m(3n, '')])).to.equal(false);
  });

  it('strict reconfiguration refuses a member while a voter has not been connected for the health interval', async () => {
    const recent = { '2': NOW - HEALTH_INTERVAL_MS + 100, '3': NOW - 60_000 };
    const { r, proposed } = setup([m(1n), m(2n), m(3n)], { connectedSince: recent });
    await rejects(r.addMember(['http://127.0.0.1:4'], true), Errors.unhealthy());
    await rejects(r.addMember(['http://127.0.0.1:4'], false), Errors.unhealthy());
    expect(proposed).to.have.length(0);
  });

  it('adds a learner or a voter once every voter has been connected long enough', async () => {
    const { r, proposed } = setup([m(1n), m(2n)], { connectedSince: { '2': NOW - 60_000 } });
    const { member } = await r.addMember(['http://127.0.0.1:4'], true);
    expect(member).to.include({ name: '', isLearner: true });
    expect(proposed.map((p) => p.type)).to.deep.equal([ConfChangeType.AddLearnerNode]);
    await r.addMember(['http://127.0.0.1:5'], false);
    expect(proposed.map((p) => p.type)).to.deep.equal([ConfChangeType.AddLearnerNode, ConfChangeType.AddNode]);
  });

  it('from 3.5.31 (and in 3.6.12+), a quorum of the voters plus the new member, counted as down, is enough', async () => {
    const long = NOW - 60_000;
    // three voters, one down: 2 connected of a would-be 4 (quorum 3) is refused by both rules
    const three = setup([m(1n), m(2n), m(3n)], { rule: 'quorum-with-new', connectedSince: { '2': long } });
    await rejects(three.r.addMember(['http://127.0.0.1:9'], true), Errors.unhealthy());
    // five voters, one down: 4 connected of a would-be 6 (quorum 4) is enough for the new rule, not for the old
    const five = [m(1n), m(2n), m(3n), m(4n), m(5n)];
    const up = { '2': long, '3': long, '4': long };
    const newer = setup(five, { rule: 'quorum-with-new', connectedSince: up });
    await newer.r.addMember(['http://127.0.0.1:9'], true);
    expect(newer.proposed.map((p) => p.type)).to.deep.equal([ConfChangeType.AddLearnerNode]);
    await rejects(setup(five, { rule: 'all-voters', connectedSince: up }).r.addMember(['http://127.0.0.1:9'], true), Errors.unhealthy());
    // a single member may always grow
    await setup([m(1n)], { rule: 'quorum-with-new' }).r.addMember(['http://127.0.0.1:9'], true);
  });

  it('without strict reconfiguration, only taken URLs are refused', async () => {
    const { r } = setup([m(1n), m(2n, '')], { strict: false });
    await r.addMember(['http://127.0.0.1:4'], false);
    await rejects(r.addMember(['http://127.0.0.1:2'], false), Errors.peerURLExist());
  });

  it('promotes a learner only on the leader (a follower forwards it) and once it has 90% of the leader\'s log', async () => {
    const members = [m(1n), m(2n), m(3n, 'm3', true)];
    const follower = setup(members, { leader: false });
    await follower.r.promoteMember(3n);
    expect(follower.forwarded, 'a follower hands the promotion to the leader').to.deep.equal([3n]);
    expect(follower.proposed).to.deep.equal([]);
    const behind = new Map([[1n, { match: 100 }], [3n, { match: 80 }]]);
    await rejects(setup(members, { progress: behind }).r.promoteMember(3n), Errors.learnerNotReady());
    const close = new Map([[1n, { match: 100 }], [3n, { match: 95 }]]);
    const { r, proposed } = setup(members, { progress: close });
    await r.promoteMember(3n);
    expect(proposed).to.deep.equal([{ type: ConfChangeType.AddNode, id: 3n, member: {} }]);
    await rejects(r.promoteMember(2n), Errors.memberNotLearner());
  });

  it('removes and updates only members that exist', async () => {
    const { r, proposed } = setup([m(1n), m(2n)]);
    await rejects(r.removeMember(7n), Errors.memberNotFound());
    await r.removeMember(2n);
    await r.updateMember(1n, ['http://127.0.0.1:11']);
    expect(proposed.map((p) => [p.type, p.id])).to.deep.equal([[ConfChangeType.RemoveNode, 2n], [ConfChangeType.UpdateNode, 1n]]);
  });

  it('refuses a second learner, and an ID removed before, with the reference\'s errors', async () => {
    const { r, proposed } = setup([m(1n), m(2n), m(3n, 'm3', true)], { connectedSince: { '2': NOW - HEALTH_INTERVAL_MS - 1 } });
    await rejects(r.addMember(['http://127.0.0.1:9'], true), Errors.tooManyLearners());
    await r.addMember(['http://127.0.0.1:9'], false);
    expect(proposed.map((p) => p.type)).to.deep.equal([ConfChangeType.AddNode]);
    const ms = new Membership(9n);
    ms.remove(5n);
    expect(() => ms.validateAdd(5n, ['http://127.0.0.1:5'], false)).to.throw(Errors.memberNotFound().message);
  });
});

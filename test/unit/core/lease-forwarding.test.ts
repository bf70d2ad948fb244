// Lease forwarding and leadership transfer without a cluster: a follower asks the leader (a fake peer POST)
// for renewals and remaining TTLs; the leader answers those calls and revokes expired leases; leadership goes
// to the caught-up, longest-connected voter.
import { expect } from 'chai';
import type { Member } from '../../../server/cluster/membership.js';
import { LeaseForwarder, type LeaseForwarderDeps } from '../../../server/core/lease-forwarder.js';
import { LeadershipTransfer } from '../../../server/core/leadership.js';
import { MemberLifecycle } from '../../../server/core/lifecycle.js';
import { Errors } from '../../../server/core/errors.js';
import type { InternalRequest } from '../../../server/core/requests.js';
import { nopLogger } from '../../../server/log/logger.js';

const member = (id: bigint, isLearner = false): Member => ({ id, name: `m${id}`, peerURLs: [`http://127.0.0.1:${id}`], clientURLs: [], isLearner });

function forwarder(o: { leader: boolean; lead?: bigint; leases?: Map<bigint, number>; answer?: { status: number; body: string } }) {
  const leases = o.leases ?? new Map([[5n, 30]]);
  const posts: Array<{ url: string; body: unknown }> = [];
  const proposed: InternalRequest[] = [];
  const deps: LeaseForwarderDeps = {
    lessor: {
      exists: (id) => leases.has(id),
      timeToLive: (id, keys) => ({ id, ttl: leases.get(id)! - 1, grantedTtl: leases.get(id)!, keys: keys ? [Buffer.from('k')] : undefined }),
      leases: () => [...leases.keys()].map((id) => ({ id, ttl: leases.get(id)!, remainingTtl: 0, keys: [] }) as never),
      expired: () => [...leases.keys()],
      renew: (id) => leases.get(id)!,
    },
    renewLocal: (id) => {
      if (!leases.has(id)) throw Errors.leaseNotFound();
      return leases.get(id)!;
    },
    leader: () => o.lead ?? 2n,
    isLeader: () => o.leader,
    member: (id) => (id === 2n ? member(2n) : undefined),
    proposals: {
      propose: async <T>(req: InternalRequest) => {
        proposed.push(req);
        return undefined as T;
      },
      nextRequestId: () => 1n,
    },
    requestTimeoutMs: () => 1000,
    post: async (url, body) => {
      posts.push({ url, body: JSON.parse(body) });
      return o.answer ?? { status: 200, body: JSON.stringify({ ttl: 42, grantedTtl: 60, keys: [Buffer.from('a').toString('base64')] }) };
    },
    logger: nopLogger,
    lifecycle: new MemberLifecycle(),
  };
  return { f: new LeaseForwarder(deps), posts, proposed };
}

describe('core/lease forwarding', () => {
  it('the leader renews and tells TTLs itself', async () => {
    const { f, posts } = forwarder({ leader: true });
    expect(await f.renew(5n)).to.equal(30);
    expect(await f.leaseTimeToLive(5n, true)).to.deep.equal({ ttl: 29, grantedTtl: 30, keys: [Buffer.from('k')] });
    expect(await f.leaseTimeToLive(6n, false)).to.equal(undefined);
    expect(posts).to.have.length(0);
  });

  it('a follower asks the leader over its peer URL', async () => {
    const { f, posts } = forwarder({ leader: false });
    expect(await f.renew(5n)).to.equal(42);
    const t = await f.leaseTimeToLive(5n, true);
    expect(t).to.deep.equal({ ttl: 42, grantedTtl: 60, keys: [Buffer.from('a')] });
    expect(posts).to.deep.equal([
      { url: 'http://127.0.0.1:2/leases/renew', body: { id: '5' } },
      { url: 'http://127.0.0.1:2/leases/ttl', body: { id: '5', keys: true } },
    ]);
  });

  it('a lease the leader does not know is "not found"; without a leader, "no leader"', async () => {
    const notFound = forwarder({ leader: false, answer: { status: 404, body: JSON.stringify({ error: 'x' }) } });
    expect(await notFound.f.leaseTimeToLive(5n, false)).to.equal(undefined);
    const e = await notFound.f.renew(5n).then(() => undefined, (x: Error) => x);
    expect(e?.message).to.equal(Errors.leaseNotFound().message);
    const none = forwarder({ leader: false, lead: 0n });
    const e2 = await none.f.renew(5n).then(() => undefined, (x: Error) => x);
    expect(e2?.message).to.equal(Errors.noLeader().message);
  });

  it('answers peers only as the leader', () => {
    expect(forwarder({ leader: false }).f.callForPeer('renew', '{"id":"5"}').status).to.equal(503);
    const { f } = forwarder({ leader: true });
    expect(f.callForPeer('renew', '{"id":"5"}')).to.deep.equal({ status: 200, json: { ttl: 30 } });
    expect(f.callForPeer('ttl', '{"id":"6"}').status).to.equal(404);
    expect(f.callForPeer('ttl', '{"id":"5","keys":true}')).to.deep.equal({ status: 200, json: { ttl: 29, grantedTtl: 30, keys: [Buffer.from('k').toString('base64')] } });
  });

  it('the leader revokes expired leases through the log; a follower does not', () => {
    const follower = forwarder({ leader: false });
    follower.f.revokeExpired();
    expect(follower.proposed).to.have.length(0);
    const leader = forwarder({ leader: true, leases: new Map([[5n, 1], [7n, 1]]) });
    leader.f.revokeExpired();
    expect(leader.proposed.map((r) => r.kind === 'leaseRevoke' && r.leaseRevoke.id)).to.deep.equal([5n, 7n]);
  });
});

describe('core/leadership transfer', () => {
  function transfer(o: { leader: boolean; progress?: Map<bigint, { match: number }>; since?: Record<string, number> }) {
    const node = {
      lead: o.leader ? 1n : 2n,
      transfers: [] as bigint[],
      isLeader: () => o.leader,
      transferLeader(to: bigint) {
        this.transfers.push(to);
        this.lead = to; // the transferee takes over at once here
      },
      progress: () => o.progress,
      kick: () => undefined,
    };
    const voters = [member(1n), member(2n), member(3n), member(4n)];
    const t = new LeadershipTransfer({
      memberId: 1n, logger: nopLogger, tickMs: 1, electionMs: 10, node,
      member: (id) => [...voters, member(5n, true)].find((m) => m.id === id),
      voters: () => voters,
      activeSince: (id) => o.since?.[String(id)],
    });
    return { t, node };
  }

  it('picks the connected voter with the longest log, ties to the longest connected', () => {
    const progress = new Map([[2n, { match: 10 }], [3n, { match: 12 }], [4n, { match: 12 }]]);
    expect(transfer({ leader: true, progress, since: { '2': 1, '3': 50, '4': 40 } }).t.pickTransferee()).to.equal(4n);
    expect(transfer({ leader: true, progress, since: { '2': 1 } }).t.pickTransferee()).to.equal(2n);
    expect(transfer({ leader: true, progress, since: {} }).t.pickTransferee()).to.equal(undefined);
  });

  it('moves leadership only from the leader, and only to a voter', async () => {
    const notLeader = await transfer({ leader: false }).t.moveLeader(2n).then(() => undefined, (e: Error) => e);
    expect(notLeader?.message).to.equal(Errors.notLeader().message);
    const learner = await transfer({ leader: true }).t.moveLeader(5n).then(() => undefined, (e: Error) => e);
    expect(learner?.message).to.equal(Errors.badLeaderTransferee().message);
    const { t, node } = transfer({ leader: true });
    await t.moveLeader(3n);
    expect(node.transfers).to.deep.equal([3n]);
  });
});

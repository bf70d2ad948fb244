// The proposer without a cluster: request ids, waiters settled by the applier, each proposal handed to the raft
// node in order (which batches them: raft-node.test.ts), failures of refused proposals, and linearizable reads
// through read-index requests.
import { expect } from 'chai';
import { ProposalDroppedError } from '../../../server/raft/errors.js';
import { ConfChangeType, type ConfChange } from '../../../server/raft/types.js';
import { Proposer, type AppliedIndex, type ProposerRaft } from '../../../server/core/proposer.js';
import { MemberLifecycle } from '../../../server/core/lifecycle.js';
import { decodeRequest, decodeTagged, type InternalRequest } from '../../../server/core/requests.js';
import { Errors } from '../../../server/core/errors.js';
import { IdWaiters } from '../../../server/core/wait.js';

class FakeRaft implements ProposerRaft {
  lead = 1n;
  proposed: Array<{ data: Uint8Array; refused: (e: unknown) => void }> = [];
  confChanges: ConfChange[] = [];
  reads: Buffer[] = [];
  kicks = 0;
  refuse?: Error;
  propose(data: Uint8Array, refused: (e: unknown) => void): void {
    this.proposed.push({ data, refused });
  }
  /** The next ready pass steps what was proposed: the core refuses it all. */
  refuseProposed(e: Error): void {
    for (const p of this.proposed.splice(0)) p.refused(e);
  }
  proposeConfChange(cc: ConfChange): void {
    if (this.refuse) throw this.refuse;
    this.confChanges.push(cc);
  }
  readIndex(ctx: Uint8Array): void {
    this.reads.push(Buffer.from(ctx));
  }
  kick(): void {
    this.kicks++;
  }
}

class FakeApplied implements AppliedIndex {
  appliedIndex = 0;
  private waiting: Array<{ index: number; fn: () => void }> = [];
  waitApplied(index: number, fn: () => void): void {
    this.waiting.push({ index, fn });
  }
  advance(to: number): void {
    this.appliedIndex = to;
    const ready = this.waiting.filter((w) => w.index <= to);
    this.waiting = this.waiting.filter((w) => w.index > to);
    for (const w of ready) w.fn();
  }
}

function setup(opts: { maxRequestBytes?: number } = {}) {
  const raft = new FakeRaft();
  const applied = new FakeApplied();
  const lifecycle = new MemberLifecycle();
  const stats = { proposalsPending: 0, proposalsFailed: 0, readIndexesFailed: 0 };
  const p = new Proposer(raft, applied, lifecycle, stats, { maxRequestBytes: opts.maxRequestBytes ?? 1024 * 1024, electionMs: 100, tickMs: 10, idPrefix: 0xabcdefn << 40n });
  return { raft, applied, lifecycle, stats, p };
}

const put = (id: bigint, key = 'k'): InternalRequest => ({ id, kind: 'put', put: { key: Buffer.from(key), value: Buffer.from('v'), lease: 0n, prevKv: false, ignoreValue: false, ignoreLease: false } });
const settled = <T>(p: Promise<T>) => p.then((v) => ({ ok: true as const, v }), (e: Error) => ({ ok: false as const, e }));

describe('core/proposer', () => {
  it('request ids carry the prefix and count up', () => {
    const { p } = setup();
    const a = p.nextRequestId();
    const b = p.nextRequestId();
    expect(a >> 40n).to.equal(0xabcdefn);
    expect(b).to.equal(a + 1n);
  });

  it('hands each proposal to the raft node in order, and the applier settles each waiter', async () => {
    const { raft, p, stats } = setup();
    const r1 = p.propose<string>(put(p.nextRequestId(), 'a'));
    const r2 = p.propose<string>(put(p.nextRequestId(), 'b'));
    await Promise.resolve();
    expect(stats.proposalsPending).to.equal(2);
    expect(raft.proposed).to.have.length(2);
    const reqs = raft.proposed.map((q) => decodeRequest(q.data));
    expect(reqs.map((r) => r.kind === 'put' && Buffer.from(r.put.key).toString())).to.deep.equal(['a', 'b']);
    expect(p.settle(reqs[0].id, 'one')).to.equal(true);
    expect(p.settle(reqs[1].id, undefined, Errors.leaseNotFound())).to.equal(true);
    expect(await r1).to.equal('one');
    expect((await settled(r2)).ok).to.equal(false);
    expect(stats.proposalsPending).to.equal(0);
    // nobody waits for an id proposed elsewhere
    expect(p.settle(12345n, 'x')).to.equal(false);
  });

  it('a batch the consensus core refuses fails every proposal in it (leader changed / no leader)', async () => {
    const { raft, p, stats } = setup();
    const r1 = settled(p.propose(put(p.nextRequestId())));
    const r2 = settled(p.propose(put(p.nextRequestId())));
    await Promise.resolve();
    raft.refuseProposed(new ProposalDroppedError());
    for (const r of [await r1, await r2]) {
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.e.message).to.equal(Errors.leaderChanged().message);
    }
    expect(stats.proposalsFailed).to.equal(2);
    // refused once the leader is gone: no leader
    const r3 = settled(p.propose(put(p.nextRequestId())));
    await Promise.resolve();
    raft.lead = 0n;
    raft.refuseProposed(new ProposalDroppedError());
    const r = await r3;
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.e.message).to.equal(Errors.noLeader().message);
  });

  it('refuses a request above --max-request-bytes before proposing it', async () => {
    const { raft, p } = setup({ maxRequestBytes: 10 });
    const r = await settled(p.propose(put(p.nextRequestId(), 'a-long-key-well-past-ten-bytes')));
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.e.message).to.equal(Errors.requestTooLarge().message);
    expect(raft.proposed).to.have.length(0);
  });

  it('a proposal that never applies times out (and counts as failed)', async () => {
    const { p, stats } = setup();
    const r = await settled(p.propose(put(p.nextRequestId()), 20));
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.e.message).to.equal(Errors.timeout().message);
    expect(stats.proposalsFailed).to.equal(1);
  });

  it('waiters share one timer: each times out at its own deadline, in any order, and the timer goes once none wait', async () => {
    let settledCount = 0;
    const w = new IdWaiters<string>(() => settledCount++);
    const order: string[] = [];
    const track = (id: bigint, ms: number) => w.register(id, ms, () => new Error(`t${id}`)).then((v) => order.push(v), (e: Error) => order.push(e.message));
    const all = [track(1n, 60), track(2n, 15), track(3n, 1000), track(4n, 30)];
    w.resolve(3n, 'r3');
    await Promise.all(all);
    expect(order).to.deep.equal(['r3', 't2', 't4', 't1']);
    expect(settledCount).to.equal(4);
    expect(w.size).to.equal(0);
    expect((w as unknown as { timer?: unknown }).timer).to.equal(undefined);
  });

  it('without a leader, waits a bounded time and fails with no leader', async () => {
    const { raft, p } = setup();
    raft.lead = 0n;
    const r = await settled(p.propose(put(p.nextRequestId()), 50));
    expect(r.ok).to.equal(false);
    if (!r.ok) expect(r.e.message).to.equal(Errors.noLeader().message);
  });

  it('a conf change carries its waiter id, and resolves with the member list once applied', async () => {
    const { raft, p } = setup();
    const r = p.proposeConfChange(ConfChangeType.AddNode, 7n, { name: 'n7', peerURLs: ['http://127.0.0.1:7'] });
    await new Promise((res) => setImmediate(res));
    expect(raft.confChanges).to.have.length(1);
    const ctx = decodeTagged<{ requestId: bigint; name: string }>(raft.confChanges[0].context);
    expect(ctx.name).to.equal('n7');
    const members = [{ id: 7n, name: 'n7', peerURLs: ['http://127.0.0.1:7'], clientURLs: [], isLearner: false }];
    p.confChangeApplied(ctx.requestId, members);
    expect(await r).to.deep.equal(members);
  });

  it('a linearizable read waits for the read index to be applied locally', async () => {
    const { raft, applied, p } = setup();
    applied.appliedIndex = 3;
    let done = false;
    const r = p.linearizableReadNotify().then(() => { done = true; });
    await Promise.resolve();
    expect(raft.reads).to.have.length(1);
    p.onReadState(raft.reads[0].toString('hex'), 5);
    await Promise.resolve();
    expect(done).to.equal(false);
    applied.advance(5);
    await r;
    expect(done).to.equal(true);
  });

  it('reads asked while one is in flight share the next read-index request', async () => {
    const { raft, applied, p } = setup();
    applied.appliedIndex = 10;
    const first = p.linearizableReadNotify();
    await Promise.resolve();
    const second = p.linearizableReadNotify();
    const third = p.linearizableReadNotify();
    await Promise.resolve();
    expect(raft.reads).to.have.length(1);
    p.onReadState(raft.reads[0].toString('hex'), 10);
    await first;
    await new Promise((res) => setImmediate(res));
    expect(raft.reads).to.have.length(2);
    // an answer to an old request is ignored
    p.onReadState(raft.reads[0].toString('hex'), 10);
    p.onReadState(raft.reads[1].toString('hex'), 10);
    await Promise.all([second, third]);
  });

  it('stopping fails every waiter with "server stopped", and later proposals at once', async () => {
    const { p, lifecycle } = setup();
    const prop = settled(p.propose(put(p.nextRequestId())));
    const read = settled(p.linearizableReadNotify());
    await Promise.resolve();
    lifecycle.stopping = true;
    lifecycle.stopped = true;
    p.stop();
    for (const r of [await prop, await read, await settled(p.propose(put(p.nextRequestId())))]) {
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.e.message).to.equal(Errors.stopped().message);
    }
  });
});

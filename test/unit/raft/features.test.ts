// Targeted tests of each consensus feature, on the simulated network (no drops, one-unit delays
// unless a test says otherwise). Every run still goes through the simulator's safety checks.

import { expect } from 'chai';
import type { Message, NodeId } from '../../../server/raft/index.js';
import {
  CAMPAIGN_TRANSFER,
  ConfChangeType,
  EntryType,
  MessageType,
  NONE,
  ProposalDroppedError,
  RaftError,
  StateRole,
  decodeConfChange,
  MemoryStorage,
  RawNode,
} from '../../../server/raft/index.js';
import { Cluster, TICK, checkLiveness, type SimOptions } from './sim.js';

function cluster(n: number, o: Partial<SimOptions> = {}): Cluster {
  return new Cluster({
    nodes: n,
    seed: 7,
    preVote: false,
    checkQuorum: false,
    electionTick: 10,
    heartbeatTick: 1,
    maxSizePerMsg: 1024 * 1024,
    maxInflightMsgs: 256,
    disableProposalForwarding: false,
    dropRate: 0,
    dupRate: 0,
    maxDelay: 1,
    ...o,
  });
}

function elect(c: Cluster): NodeId {
  expect(c.runUntil(() => c.stableLeader() !== undefined, 100), 'a leader is elected').to.equal(true);
  return c.stableLeader()!;
}

function term(c: Cluster, id: NodeId): number {
  return c.raw(id).status().hardState.term;
}

function role(c: Cluster, id: NodeId): StateRole {
  return c.raw(id).status().softState.role;
}

/** Proposes on `on` and waits until every live member applied it; returns its index. */
function commit(c: Cluster, on: NodeId): number {
  const p = c.propose(on);
  expect(p, 'proposal accepted').to.be.a('string');
  const ok = c.runUntil(() => {
    const at = c.appliedProposals.get(p!);
    return at !== undefined && c.alive().every((id) => c.nodes.get(id)!.app.applied >= at);
  }, 50);
  expect(ok, `proposal ${p} applied everywhere`).to.equal(true);
  return c.appliedProposals.get(p!)!;
}

function followers(c: Cluster, lead: NodeId): NodeId[] {
  return c.ids.filter((id) => id !== lead);
}

function msg(m: Partial<Message> & { type: MessageType }): Message {
  return {
    to: NONE,
    from: NONE,
    term: 0,
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    reject: false,
    rejectHint: 0,
    context: new Uint8Array(0),
    ...m,
  };
}

describe('raft: election', () => {
  it('elects exactly one leader with randomized timeouts', () => {
    const c = cluster(3);
    const l = elect(c);
    const t = term(c, l);
    expect(c.ids.filter((id) => role(c, id) === StateRole.Leader)).to.deep.equal([l]);
    for (const id of c.ids) expect(term(c, id)).to.equal(t);
  });

  it('a single member elects itself and commits alone', () => {
    const c = cluster(1);
    const l = elect(c);
    expect(l).to.equal(1n);
    commit(c, l);
  });

  it('the first Ready after bootstrap carries the ConfChange entries as committed', () => {
    const s = new MemoryStorage();
    RawNode.bootstrap(s, [1n, 2n, 3n].map((id) => ({ id, context: new TextEncoder().encode(`m${id}`) })));
    const rn = new RawNode({ id: 1n, electionTick: 10, heartbeatTick: 1, storage: s, preVote: false, checkQuorum: false, random: () => 0.5 });
    const rd = rn.ready();
    expect(rd.committedEntries.map((e) => e.type)).to.deep.equal([EntryType.ConfChange, EntryType.ConfChange, EntryType.ConfChange]);
    const ccs = rd.committedEntries.map((e) => decodeConfChange(e.data));
    expect(ccs.map((cc) => cc.nodeId)).to.deep.equal([1n, 2n, 3n]);
    expect(new TextDecoder().decode(ccs[1].context)).to.equal('m2');
    let cs;
    for (const cc of ccs) cs = rn.applyConfChange(cc);
    rn.advance(rd);
    expect(cs!.voters).to.deep.equal([1n, 2n, 3n]);
    expect(rn.status().applied).to.equal(3);
    expect(() => RawNode.bootstrap(s, [{ id: 1n, context: new Uint8Array(0) }])).to.throw(RaftError);
  });

  it('refuses to step local-only messages from the network', () => {
    const c = cluster(1);
    try {
      c.raw(1n).step(msg({ type: MessageType.Hup, from: 2n, to: 1n }));
      expect.fail('should throw');
    } catch (e) {
      expect((e as RaftError).code).to.equal('StepLocalMsg');
    }
  });
});

/** A 3-member cluster whose elected leader's first follower has been cut off for 100 ticks, at term t. */
function cutOffFollower(preVote: boolean): { c: Cluster; l: NodeId; t: number; f: NodeId } {
  const c = cluster(3, { preVote });
  const l = elect(c);
  const t = term(c, l);
  const f = followers(c, l)[0];
  c.isolate(f);
  c.runTicks(100);
  return { c, l, t, f };
}

/** A 3-member cluster whose elected leader has been cut off from the others for 25 ticks. */
function cutOffLeader(checkQuorum: boolean): { c: Cluster; l: NodeId } {
  const c = cluster(3, { checkQuorum });
  const l = elect(c);
  c.isolate(l);
  c.runTicks(25);
  return { c, l };
}

describe('raft: pre-vote and check-quorum', () => {
  it('pre-vote keeps a rejoining partitioned member from disrupting the leader', () => {
    const { c, l, t, f } = cutOffFollower(true);
    expect(term(c, f), 'pre-candidate does not bump its term').to.equal(t);
    expect(role(c, f)).to.equal(StateRole.PreCandidate);
    c.heal();
    c.runTicks(30);
    expect(c.stableLeader()).to.equal(l);
    for (const id of c.ids) expect(term(c, id)).to.equal(t);
  });

  it('without pre-vote the same rejoining member forces a new election', () => {
    const { c, l, t, f } = cutOffFollower(false);
    expect(term(c, f)).to.be.greaterThan(t);
    c.heal();
    c.runTicks(50);
    expect(term(c, l)).to.be.greaterThan(t);
  });

  it('check-quorum: a leader cut off from the quorum steps down', () => {
    const { c, l } = cutOffLeader(true);
    expect(role(c, l)).to.equal(StateRole.Follower);
    const rest = followers(c, l);
    expect(rest.some((id) => role(c, id) === StateRole.Leader)).to.equal(true);
  });

  it('without check-quorum the cut-off leader stays leader', () => {
    const { c, l } = cutOffLeader(false);
    expect(role(c, l)).to.equal(StateRole.Leader);
  });

  it('leader lease: a member that heard from the leader recently ignores a vote request, unless it is a transfer', () => {
    const c = cluster(3, { checkQuorum: true });
    const l = elect(c);
    const t = term(c, l);
    const [f, g] = followers(c, l);
    const last = c.raw(f).raft.raftLog.lastIndex();
    c.raw(f).step(msg({ type: MessageType.Vote, from: g, to: f, term: t + 5, index: last + 10, logTerm: t + 5 }));
    expect(term(c, f)).to.equal(t);
    c.raw(f).step(msg({ type: MessageType.Vote, from: g, to: f, term: t + 5, index: last + 10, logTerm: t + 5, context: CAMPAIGN_TRANSFER }));
    expect(term(c, f)).to.equal(t + 5);
    expect(c.raw(f).status().hardState.vote).to.equal(g);
  });
});

describe('raft: replication', () => {
  it('a diverged old leader is brought back in line with few probes (reject hints)', () => {
    const c = cluster(3);
    const l = elect(c);
    commit(c, l);
    c.isolate(l);
    // The isolated leader appends entries no one else will ever see.
    for (let i = 0; i < 30; i++) c.propose(l);
    c.runTicks(1);
    expect(c.runUntil(() => followers(c, l).some((id) => role(c, id) === StateRole.Leader), 60)).to.equal(true);
    const l2 = c.leader()!;
    for (let i = 0; i < 30; i++) c.propose(l2);
    c.runTicks(3);
    // A leader of a newer term starts probing the old leader at its own last index, far past the
    // point of divergence: the reject hint must skip the whole divergent term at once.
    const l3 = followers(c, l).find((x) => x !== l2)!;
    c.raw(l2).transferLeader(l3);
    expect(c.runUntil(() => role(c, l3) === StateRole.Leader, 20)).to.equal(true);
    c.runTicks(2);
    let rejects = 0;
    let appsToOld = 0;
    c.tap = (m) => {
      if (m.type === MessageType.AppResp && m.reject && m.from === l) rejects++;
      if (m.type === MessageType.App && m.to === l && m.from === l3) appsToOld++;
    };
    c.heal();
    const target = c.raw(l3).raft.raftLog.lastIndex();
    expect(c.runUntil(() => c.nodes.get(l)!.storage.lastIndex() >= target && c.nodes.get(l)!.app.applied >= target, 50)).to.equal(true);
    // One rejection per divergent term at most, not one per entry.
    expect(rejects).to.be.within(1, 3);
    expect(appsToOld).to.be.greaterThan(0);
    const st = c.nodes.get(l)!.storage;
    const st2 = c.nodes.get(l3)!.storage;
    for (let i = st2.firstIndex(); i <= target; i++) expect(st.term(i)).to.equal(st2.term(i));
  });

  it('batches by maxSizePerMsg and bounds the inflight window', () => {
    const c = cluster(3, { maxSizePerMsg: 80, maxInflightMsgs: 2 });
    const l = elect(c);
    commit(c, l);
    const [f] = followers(c, l);
    let appsToF = 0;
    let maxEntries = 0;
    c.tap = (m) => {
      if (m.type === MessageType.App && m.to === f) {
        appsToF++;
        maxEntries = Math.max(maxEntries, m.entries.length);
      }
    };
    // The follower goes silent: the leader may have at most 2 appends in flight to it.
    c.partition([[l, ...followers(c, l).filter((x) => x !== f)], [f]]);
    for (let i = 0; i < 20; i++) c.propose(l);
    c.runTicks(1);
    expect(appsToF).to.be.at.most(2);
    c.heal();
    c.runTicks(20);
    expect(c.nodes.get(f)!.app.applied).to.equal(c.nodes.get(l)!.app.applied);
    // ~20 bytes per entry: an 80-byte budget fits a few entries, never all 20.
    expect(maxEntries).to.be.within(1, 4);
  });

  it('commits only entries of the current term by counting replicas (the new leader appends an empty entry)', () => {
    const c = cluster(3);
    const l = elect(c);
    c.runTicks(2);
    const log = c.raw(l).raft.raftLog;
    const last = log.lastIndex();
    const e = log.slice(last, last + 1)[0];
    expect(e.term).to.equal(term(c, l));
    expect(e.data.length).to.equal(0);
    expect(log.committed).to.equal(last);
  });
});

describe('raft: commit rule (Raft figure 8)', () => {
  it('an entry of an older term is not committed by counting replicas, only with one of the current term', () => {
    const s = new MemoryStorage();
    RawNode.bootstrap(s, [1n, 2n, 3n].map((id) => ({ id, context: new Uint8Array(0) })));
    // index 4 was written in term 2 by a leader that crashed before committing it
    s.append([{ index: 4, term: 2, type: EntryType.Normal, data: new Uint8Array([4]) }]);
    s.setHardState({ term: 3, vote: NONE, commit: 3 });
    const rn = new RawNode({ id: 1n, electionTick: 10, heartbeatTick: 1, storage: s, preVote: false, checkQuorum: false, random: () => 0 });
    const rd = rn.ready();
    for (const e of rd.committedEntries) rn.applyConfChange(decodeConfChange(e.data));
    rn.advance(rd);
    rn.campaign();
    rn.step(msg({ type: MessageType.VoteResp, from: 2n, to: 1n, term: 4 }));
    expect(rn.status().softState.role).to.equal(StateRole.Leader);
    const rd2 = rn.ready();
    s.append(rd2.entries);
    if (rd2.hardState) s.setHardState(rd2.hardState);
    rn.advance(rd2);
    // the new leader's empty entry of term 4 sits at index 5
    const log = rn.raft.raftLog;
    expect([log.lastIndex(), log.term(5)]).to.deep.equal([5, 4]);
    rn.step(msg({ type: MessageType.AppResp, from: 2n, to: 1n, term: 4, index: 4 }));
    expect(log.committed, 'index 4 (term 2) is on a majority but must not commit yet').to.equal(3);
    rn.step(msg({ type: MessageType.AppResp, from: 2n, to: 1n, term: 4, index: 5 }));
    expect(log.committed).to.equal(5);
  });
});

describe('raft: snapshots and restart', () => {
  it('sends a snapshot to a follower that needs compacted entries, and it catches up', () => {
    const c = cluster(3);
    const l = elect(c);
    const [f] = followers(c, l);
    c.partition([[l, ...followers(c, l).filter((x) => x !== f)], [f]]);
    for (let i = 0; i < 40; i++) c.propose(l);
    c.runTicks(5);
    c.snapshotAndCompact(l, 0);
    expect(c.nodes.get(l)!.storage.firstIndex()).to.be.greaterThan(c.nodes.get(f)!.storage.lastIndex() + 1);
    let snaps = 0;
    c.tap = (m) => {
      if (m.type === MessageType.Snap && m.to === f) snaps++;
    };
    c.heal();
    const target = c.nodes.get(l)!.app.applied;
    expect(c.runUntil(() => c.nodes.get(f)!.app.applied >= target, 50)).to.equal(true);
    c.runTicks(2);
    expect(snaps).to.be.greaterThan(0);
    expect(c.nodes.get(f)!.storage.snapshot().metadata.index).to.be.greaterThan(0);
    expect(c.raw(l).status().progress!.get(f)!.state).to.equal('Replicate');
    commit(c, l);
  });

  it('a failed snapshot send (reportSnapshot false) makes the leader probe again', () => {
    const c = cluster(3, { checkQuorum: false });
    const l = elect(c);
    const [f] = followers(c, l);
    c.isolate(f);
    for (let i = 0; i < 10; i++) c.propose(l);
    c.runTicks(3);
    c.snapshotAndCompact(l, 0);
    c.heal();
    c.runTicks(3);
    // the simulated transport reports; do it by hand too, and the state machine stays consistent
    c.raw(l).reportSnapshot(f, false);
    expect(c.raw(l).status().progress!.get(f)!.state).to.not.equal('Snapshot');
    expect(c.runUntil(() => c.nodes.get(f)!.app.applied >= c.nodes.get(l)!.app.applied, 50)).to.equal(true);
  });

  it('reportUnreachable moves a pipelining follower back to probing', () => {
    const c = cluster(3);
    const l = elect(c);
    commit(c, l);
    const f = followers(c, l)[0];
    expect(c.raw(l).status().progress!.get(f)!.state).to.equal('Replicate');
    c.raw(l).reportUnreachable(f);
    expect(c.raw(l).status().progress!.get(f)!.state).to.equal('Probe');
    commit(c, l);
    expect(c.raw(l).status().progress!.get(f)!.state).to.equal('Replicate');
  });

  it('members restart from persisted state alone and keep every committed entry', () => {
    const c = cluster(3);
    const l = elect(c);
    for (let i = 0; i < 10; i++) commit(c, l);
    c.snapshotAndCompact(followers(c, l)[0], 2);
    const applied = new Map(c.ids.map((id) => [id, c.nodes.get(id)!.app.applied]));
    for (const id of c.ids) c.crash(id);
    for (const id of c.ids) c.restart(id);
    c.runTicks(1);
    for (const id of c.ids) expect(c.nodes.get(id)!.app.applied).to.be.at.least(applied.get(id)!);
    checkLiveness(c);
    const l2 = elect(c);
    expect(term(c, l2)).to.be.greaterThan(1);
    commit(c, l2);
  });
});

describe('raft: leadership transfer', () => {
  it('hands leadership to a named voter', () => {
    const c = cluster(3, { preVote: true, checkQuorum: true });
    const l = elect(c);
    const t = term(c, l);
    const f = followers(c, l)[1];
    c.raw(l).transferLeader(f);
    expect(c.runUntil(() => c.stableLeader() === f, 20)).to.equal(true);
    expect(term(c, f)).to.equal(t + 1);
    commit(c, f);
  });

  it('a transfer requested on a follower is forwarded to the leader', () => {
    const c = cluster(3);
    const l = elect(c);
    const [f, g] = followers(c, l);
    c.raw(f).transferLeader(g);
    expect(c.runUntil(() => c.stableLeader() === g, 20)).to.equal(true);
  });

  it('catches a lagging transferee up first, then sends TimeoutNow', () => {
    const c = cluster(3);
    const l = elect(c);
    const f = followers(c, l)[0];
    c.isolate(f);
    for (let i = 0; i < 10; i++) c.propose(l);
    c.runTicks(2);
    let timeoutNow = 0;
    c.tap = (m) => {
      if (m.type === MessageType.TimeoutNow) timeoutNow++;
    };
    c.heal();
    const last = c.raw(l).raft.raftLog.lastIndex();
    c.raw(l).transferLeader(f);
    expect(timeoutNow).to.equal(0);
    expect(c.runUntil(() => c.stableLeader() === f, 20)).to.equal(true);
    expect(timeoutNow).to.equal(1);
    c.runTicks(2);
    expect(c.raw(f).raft.raftLog.committed).to.be.greaterThan(last);
  });

  it('aborts after an election timeout, dropping proposals meanwhile', () => {
    const c = cluster(3);
    const l = elect(c);
    const f = followers(c, l)[0];
    c.isolate(f);
    c.raw(l).transferLeader(f);
    expect(c.raw(l).status().leadTransferee).to.equal(f);
    expect(() => c.raw(l).propose(new Uint8Array([1]))).to.throw(ProposalDroppedError);
    c.runTicks(11);
    expect(c.raw(l).status().leadTransferee).to.equal(NONE);
    expect(role(c, l)).to.equal(StateRole.Leader);
    c.heal();
    commit(c, l);
  });

  it('ignores a transferee that is not a voter, or itself', () => {
    const c = cluster(3);
    const l = elect(c);
    c.raw(l).transferLeader(99n);
    expect(c.raw(l).status().leadTransferee).to.equal(NONE);
    c.raw(l).transferLeader(l);
    expect(c.raw(l).status().leadTransferee).to.equal(NONE);
    c.addNode(4n);
    c.raw(l).proposeConfChange({ type: ConfChangeType.AddLearnerNode, nodeId: 4n, context: new Uint8Array(0) });
    expect(c.runUntil(() => c.raw(l).status().confState.learners.includes(4n), 20)).to.equal(true);
    c.raw(l).transferLeader(4n);
    expect(c.raw(l).status().leadTransferee).to.equal(NONE);
    c.runTicks(20);
    expect(c.stableLeader()).to.equal(l);
  });
});

describe('raft: read index', () => {
  it('serves a read on the leader at or after the commit index', () => {
    const c = cluster(3);
    const l = elect(c);
    const idx = commit(c, l);
    const ctx = c.readIndex(l)!;
    expect(c.runUntil(() => c.readResults.has(ctx), 10)).to.equal(true);
    expect(c.readResults.get(ctx)).to.be.at.least(idx);
  });

  it('a follower forwards the read to the leader and gets the index back', () => {
    const c = cluster(3);
    const l = elect(c);
    const idx = commit(c, l);
    const f = followers(c, l)[0];
    const seen: string[] = [];
    c.tap = (m) => {
      if (m.type === MessageType.ReadIndex || m.type === MessageType.ReadIndexResp) seen.push(`${m.type} ${m.from}->${m.to}`);
    };
    const ctx = c.readIndex(f)!;
    expect(c.runUntil(() => c.readResults.has(ctx), 10)).to.equal(true);
    expect(c.readResults.get(ctx)).to.be.at.least(idx);
    expect(seen).to.deep.equal([`ReadIndex ${f}->${l}`, `ReadIndexResp ${l}->${f}`]);
  });

  it('a new leader delays reads until it has committed an entry of its term', () => {
    const c = cluster(3);
    const first = elect(c);
    commit(c, first);
    const f = followers(c, first)[0];
    c.raw(first).transferLeader(f);
    // Cut the new leader off the moment it wins, before its empty entry commits.
    expect(c.runUntil(() => c.nodes.get(f)!.raw!.status().softState.role === StateRole.Leader, 20)).to.equal(true);
    c.isolate(f);
    const emptyIdx = c.raw(f).raft.raftLog.lastIndex();
    expect(c.raw(f).raft.raftLog.committed).to.be.lessThan(emptyIdx);
    const ctx = c.readIndex(f)!;
    c.runTicks(5);
    expect(c.readResults.has(ctx), 'no read before the term commits').to.equal(false);
    c.heal();
    expect(c.runUntil(() => c.readResults.has(ctx), 20)).to.equal(true);
    expect(c.readResults.get(ctx)).to.be.at.least(emptyIdx);
  });
});

describe('raft: membership', () => {
  it('adds a voter, refuses a second pending change, removes a follower', () => {
    const c = cluster(3);
    const l = elect(c);
    commit(c, l);
    c.addNode(4n);
    c.raw(l).proposeConfChange({ type: ConfChangeType.AddNode, nodeId: 4n, context: new Uint8Array(0) });
    try {
      c.raw(l).proposeConfChange({ type: ConfChangeType.RemoveNode, nodeId: 3n, context: new Uint8Array(0) });
      expect.fail('second conf change should be refused');
    } catch (e) {
      expect((e as RaftError).code).to.equal('ConfChangePending');
    }
    expect(c.runUntil(() => c.nodes.get(4n)!.app.confState.voters.includes(4n), 30)).to.equal(true);
    expect(c.raw(l).status().confState.voters).to.deep.equal([1n, 2n, 3n, 4n]);
    const idx = commit(c, l);
    expect(c.nodes.get(4n)!.app.applied).to.be.at.least(idx);

    const victim = followers(c, l).find((x) => x !== 4n)!;
    c.raw(l).proposeConfChange({ type: ConfChangeType.RemoveNode, nodeId: victim, context: new Uint8Array(0) });
    expect(c.runUntil(() => !c.raw(l).status().confState.voters.includes(victim), 30)).to.equal(true);
    c.runTicks(1);
    expect(c.retired.has(victim)).to.equal(true);
    commit(c, l);
  });

  it('removing the leader hands over to another member quickly', () => {
    const c = cluster(3, { checkQuorum: true, preVote: true });
    const l = elect(c);
    commit(c, l);
    let handover = false;
    c.tap = (m) => {
      if (m.type === MessageType.TimeoutNow && m.from === l) handover = true;
    };
    c.raw(l).proposeConfChange({ type: ConfChangeType.RemoveNode, nodeId: l, context: new Uint8Array(0) });
    // Once the removal is applied the old leader steps down (and the simulator retires it, as a
    // removed etcd member shuts itself down).
    expect(c.runUntil(() => c.retired.has(l), 20)).to.equal(true);
    expect(handover, 'the removed leader sent TimeoutNow to a successor').to.equal(true);
    const start = c.now;
    const l2 = elect(c);
    expect(l2).to.not.equal(l);
    expect((c.now - start) / TICK, 'no full election timeout needed').to.be.lessThan(10);
    expect(c.raw(l2).status().confState.voters).to.not.include(l);
    commit(c, l2);
  });

  it('a learner replicates but never campaigns or counts; AddNode promotes it', () => {
    const c = cluster(3);
    const l = elect(c);
    c.addNode(4n);
    c.raw(l).proposeConfChange({ type: ConfChangeType.AddLearnerNode, nodeId: 4n, context: new Uint8Array(0) });
    expect(c.runUntil(() => c.nodes.get(4n)!.app.confState.learners.includes(4n), 30)).to.equal(true);
    const idx = commit(c, l);
    expect(c.nodes.get(4n)!.app.applied).to.be.at.least(idx);
    expect(c.raw(l).status().progress!.get(4n)!.isLearner).to.equal(true);
    // Quorum is still 2 of the 3 voters: with two voters down nothing commits even though the learner is up.
    const [f, g] = followers(c, l).filter((x) => x !== 4n);
    c.isolate(4n);
    c.runTicks(60);
    expect(role(c, 4n)).to.equal(StateRole.Follower);
    expect(term(c, 4n)).to.equal(term(c, l));
    c.heal();
    c.crash(f);
    c.crash(g);
    const before = c.raw(l).raft.raftLog.committed;
    c.propose(l);
    c.runTicks(5);
    expect(c.raw(l).raft.raftLog.committed).to.equal(before);
    c.restart(f);
    c.restart(g);
    c.runTicks(10);
    const l2 = elect(c);
    c.raw(l2).proposeConfChange({ type: ConfChangeType.AddNode, nodeId: 4n, context: new Uint8Array(0) });
    expect(c.runUntil(() => c.nodes.get(4n)!.app.confState.voters.includes(4n), 30)).to.equal(true);
    expect(c.raw(l2).status().confState).to.deep.equal({ voters: [1n, 2n, 3n, 4n], learners: [] });
    expect(c.raw(l2).status().progress!.get(4n)!.isLearner).to.equal(false);
  });
});

describe('raft: proposals', () => {
  it('a follower forwards proposals to the leader', () => {
    const c = cluster(3);
    const l = elect(c);
    commit(c, followers(c, l)[0]);
  });

  it('with forwarding disabled a follower refuses proposals with ProposalDropped', () => {
    const c = cluster(3, { disableProposalForwarding: true });
    const l = elect(c);
    try {
      c.raw(followers(c, l)[0]).propose(new Uint8Array([1]));
      expect.fail('should be dropped');
    } catch (e) {
      expect(e).to.be.instanceOf(ProposalDroppedError);
      expect((e as RaftError).code).to.equal('ProposalDropped');
    }
    commit(c, l);
  });

  it('without a leader proposals are dropped', () => {
    const c = cluster(3);
    expect(() => c.raw(1n).propose(new Uint8Array([1]))).to.throw(ProposalDroppedError);
  });
});

// The raft node's ready loop without disk or sockets: a one-member cluster over MemoryStorage and a fake WAL
// elects itself, persists and applies what it is given in log order, steps the proposals of one turn as one
// batch (and tells each proposer when the core refuses it), reports leadership, ignores removed members'
// messages, and does nothing once stopped.
import { expect } from 'chai';
import { RawNode, MemoryStorage, decodeConfChange } from '../../../server/raft/index.js';
import { ProposalDroppedError } from '../../../server/raft/errors.js';
import { EntryType, MessageType, StateRole, type Entry, type HardState, type Message } from '../../../server/raft/types.js';
import { RaftNode, type RaftNodeHooks } from '../../../server/core/raft-node.js';
import { MemberLifecycle } from '../../../server/core/lifecycle.js';
import type { Wal } from '../../../server/storage/wal.js';
import type { Snapshotter } from '../../../server/storage/snapshotter.js';
import { nopLogger } from '../../../server/log/logger.js';

class FakeWal {
  saved: Entry[] = [];
  /** The entries of each save, in order. */
  saves: Entry[][] = [];
  hardStates: HardState[] = [];
  fsyncCount = 0;
  async save(hs: HardState | undefined, entries: Entry[], mustSync: boolean): Promise<void> {
    if (hs) this.hardStates.push(hs);
    this.saved.push(...entries);
    if (entries.length > 0) this.saves.push(entries);
    if (mustSync) this.fsyncCount++;
  }
  async saveSnapshot(): Promise<void> {}
  releaseLockTo(): void {}
  async close(): Promise<void> {}
}

function setup() {
  const storage = new MemoryStorage();
  RawNode.bootstrap(storage, [{ id: 1n, context: new Uint8Array(0) }]);
  const wal = new FakeWal();
  const lifecycle = new MemberLifecycle();
  const applied: Entry[] = [];
  const leaders: bigint[] = [];
  const roles: StateRole[] = [];
  const removed = new Set<bigint>();
  const ref: { node?: RaftNode } = {};
  const hooks: RaftNodeHooks = {
    onLeaderChange: (lead) => leaders.push(lead),
    onRoleChange: (role) => roles.push(role),
    applyEntries: (entries) => {
      for (const e of entries) {
        if (e.type === EntryType.ConfChange) ref.node!.applyConfChange(decodeConfChange(e.data));
        applied.push(e);
      }
    },
    onReadState: () => undefined,
    restoreSnapshot: () => undefined,
    snapshotApplied: () => undefined,
    appliedIndex: () => applied.at(-1)?.index ?? 0,
    internalState: () => new Uint8Array(0),
    isRemoved: (id) => removed.has(id),
    fatal: (e) => {
      throw e;
    },
  };
  const node = new RaftNode(
    { storage, wal: wal as unknown as Wal, snapshotter: {} as Snapshotter, confState: { voters: [], learners: [] }, appliedIndex: 0, snapshotIndex: 0 },
    hooks,
    lifecycle,
    {},
    { memberId: 1n, logger: nopLogger, tickMs: 10, electionMs: 30, preVote: false, snapshotCount: 1_000_000, snapshotCatchUpEntries: 10, maxSnapshots: 1, maxWals: 1, snapDir: '/nonexistent', walDir: '/nonexistent' },
  );
  ref.node = node;
  const sent: Message[] = [];
  node.attach({ send: (m) => sent.push(...m), flush: () => undefined }, { forceCommit: () => undefined, snapshotTo: async () => undefined });
  return { node, wal, lifecycle, applied, leaders, roles, removed, sent };
}

const turn = () => new Promise((r) => setImmediate(r));

async function elect(node: RaftNode): Promise<void> {
  for (let i = 0; i < 100 && !node.isLeader(); i++) {
    node.tick();
    await turn();
    await turn();
  }
  expect(node.isLeader(), 'elected').to.equal(true);
}

describe('core/raft-node', () => {
  it('a one-member cluster elects itself and reports the leader and its role', async () => {
    const { node, leaders, roles, applied } = setup();
    await elect(node);
    expect(node.lead).to.equal(1n);
    expect(node.term).to.be.greaterThan(1);
    expect(leaders).to.deep.equal([1n]);
    expect(roles.at(-1)).to.equal(StateRole.Leader);
    // the bootstrap conf change applied
    expect(applied[0].type).to.equal(EntryType.ConfChange);
  });

  it('persists proposals in the WAL and applies them in log order', async () => {
    const { node, wal, applied } = setup();
    await elect(node);
    const refused = (e: unknown) => expect.fail(`refused: ${String(e)}`);
    node.propose(Buffer.from('a'), refused);
    node.propose(Buffer.from('b'), refused);
    for (let i = 0; i < 10 && applied.filter((e) => e.data.length > 0 && e.type === EntryType.Normal).length < 2; i++) await turn();
    const data = applied.filter((e) => e.type === EntryType.Normal && e.data.length > 0);
    expect(data.map((e) => Buffer.from(e.data).toString())).to.deep.equal(['a', 'b']);
    expect(data[1].index).to.equal(data[0].index + 1);
    const walData = wal.saved.filter((e) => e.type === EntryType.Normal && e.data.length > 0).map((e) => e.index);
    expect(walData).to.deep.equal(data.map((e) => e.index));
    expect(wal.hardStates.at(-1)?.commit).to.be.at.least(data[1].index);
  });

  it('steps the proposals of one event-loop turn as one batch: one ready pass, one WAL save', async () => {
    const { node, wal, applied } = setup();
    await elect(node);
    const refused = (e: unknown) => expect.fail(`refused: ${String(e)}`);
    const normal = (entries: Entry[]) => entries.filter((e) => e.type === EntryType.Normal && e.data.length > 0).map((e) => Buffer.from(e.data).toString());
    for (const d of ['a', 'b', 'c']) node.propose(Buffer.from(d), refused);
    for (let i = 0; i < 10 && normal(applied).length < 3; i++) await turn();
    for (const d of ['d', 'e']) node.propose(Buffer.from(d), refused);
    for (let i = 0; i < 10 && normal(applied).length < 5; i++) await turn();
    expect(wal.saves.map(normal).filter((s) => s.length > 0)).to.deep.equal([['a', 'b', 'c'], ['d', 'e']]);
    expect(normal(applied)).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
  });

  it('a batch the consensus core refuses (no leader yet) is told to each proposer, and nothing is written', async () => {
    const { node, wal } = setup();
    const errors: unknown[] = [];
    node.propose(Buffer.from('x'), (e) => errors.push(e));
    node.propose(Buffer.from('y'), (e) => errors.push(e));
    await turn();
    await turn();
    expect(errors).to.have.length(2);
    for (const e of errors) expect(e).to.be.instanceOf(ProposalDroppedError);
    expect(wal.saved.filter((e) => e.type === EntryType.Normal && e.data.length > 0)).to.deep.equal([]);
  });

  it('drops messages from removed members, and does nothing once stopped', async () => {
    const { node, removed, lifecycle } = setup();
    await elect(node);
    const term = node.currentTerm();
    // a heartbeat of a newer term would make this member a follower: from a removed member it is dropped
    const heartbeat = (from: bigint): Message => ({ type: MessageType.Heartbeat, from, to: 1n, term: term + 5, logTerm: 0, index: 0, entries: [], commit: 0, reject: false, rejectHint: 0, context: new Uint8Array(0) });
    removed.add(9n);
    node.step(heartbeat(9n));
    await turn();
    expect([node.currentTerm(), node.isLeader()]).to.deep.equal([term, true]);
    node.step(heartbeat(8n));
    await turn();
    await turn();
    expect([node.currentTerm(), node.role]).to.deep.equal([term + 5, StateRole.Follower]);
    // stopped: ticks no longer drive an election
    lifecycle.stopped = true;
    for (let i = 0; i < 50; i++) node.tick();
    node.kick();
    await node.drained();
    await turn();
    expect(node.role).to.equal(StateRole.Follower);
    expect(node.currentTerm()).to.equal(term + 5);
  });
});

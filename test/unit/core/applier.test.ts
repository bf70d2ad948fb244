// The applier without a cluster: conf changes and membership, the v3 entries it hands to the state machine (with
// their index and term, skipped at or below the consistent index), alarms, the cluster version, the leader's
// first commit, the applied index, and the internal state a snapshot carries.
import { expect } from 'chai';
import { encodeConfChange } from '../../../server/raft/confchange-codec.js';
import { ConfChangeType, EntryType, type ConfChange, type Entry } from '../../../server/raft/types.js';
import { Membership, type Member } from '../../../server/cluster/membership.js';
import { Applier, type ApplierNode, type PeerSet, type V3Apply } from '../../../server/core/applier.js';
import type { ProposalWaiters } from '../../../server/core/proposer.js';
import { V2Store } from '../../../server/core/v2store.js';
import { encodeRequest, encodeTagged, type InternalRequest } from '../../../server/core/requests.js';
import { nopLogger } from '../../../server/log/logger.js';
import { releaseFor } from '../../../server/releases.js';

const SELF = 1n;

class FakeKv implements V3Apply {
  ci = 0;
  applied: Array<{ kind: string; index: number; term: number }> = [];
  db = new Map<string, Uint8Array>();
  consistentIndex(): number {
    return this.ci;
  }
  apply(req: InternalRequest, index: number, term: number): unknown {
    this.ci = index;
    this.applied.push({ kind: req.kind, index, term });
    return { revision: index };
  }
  markApplied(index: number): void {
    this.ci = index;
  }
  currentBackend() {
    const db = this.db;
    return {
      readTx: () => ({ get: (bucket: string, key: Uint8Array) => db.get(`${bucket}/${Buffer.from(key)}`) }),
      batchTx: () => ({ put: (bucket: string, key: Uint8Array, v: Uint8Array) => void db.set(`${bucket}/${Buffer.from(key)}`, v), end: () => undefined }),
    } as unknown as ReturnType<V3Apply['currentBackend']>;
  }
}

class FakeNode implements ApplierNode {
  leader = false;
  term = 2;
  confChanges: ConfChange[] = [];
  applyConfChange(cc: ConfChange): void {
    this.confChanges.push(cc);
  }
  isLeader(): boolean {
    return this.leader;
  }
  currentTerm(): number {
    return this.term;
  }
}

class FakePeers implements PeerSet {
  log: string[] = [];
  addPeer(id: bigint, urls: string[]): void {
    this.log.push(`add ${id} ${urls.join(',')}`);
  }
  removePeer(id: bigint): void {
    this.log.push(`remove ${id}`);
  }
  updatePeer(id: bigint, urls: string[]): void {
    this.log.push(`update ${id} ${urls.join(',')}`);
  }
}

class FakeWaiters implements ProposalWaiters {
  waiting = new Set<bigint>();
  results = new Map<bigint, { result: unknown; error?: Error }>();
  conf = new Map<bigint, Member[]>();
  settle(id: bigint, result: unknown, error?: Error): boolean {
    if (!this.waiting.has(id)) return false;
    this.results.set(id, { result, error });
    return true;
  }
  confChangeApplied(requestId: bigint, members: Member[]): void {
    this.conf.set(requestId, members);
  }
}

function setup(members: Member[] = [{ id: SELF, name: 's1', peerURLs: ['http://127.0.0.1:1'], clientURLs: [], isLearner: false }], localVersion = '3.4.23') {
  const membership = new Membership(99n);
  for (const m of members) membership.add(m);
  const kv = new FakeKv();
  const node = new FakeNode();
  const peers = new FakePeers();
  const waiters = new FakeWaiters();
  const events = { firstCommits: 0, removed: 0, fatal: [] as Error[], applied: 0, snapshots: 0 };
  const stats = { proposalsApplied: 0 };
  const applier = new Applier(
    { membership, v2: new V2Store(), alarms: [], appliedIndex: 0 },
    kv, node, peers, waiters,
    { onLeaderFirstCommit: () => events.firstCommits++, onRemoved: () => events.removed++, fatal: (e) => events.fatal.push(e), forceSnapshot: () => events.snapshots++, onApplied: (n) => (events.applied += n) },
    {}, stats,
    { memberId: SELF, clusterId: 99n, localVersion, downgrade: releaseFor(localVersion).downgrade, storageVersion: releaseFor(localVersion).storageVersion, logger: nopLogger, warningApplyMs: 100 },
  );
  return { applier, kv, node, peers, waiters, events, stats };
}

let nextIndex = 1;
const entry = (req: InternalRequest, term = 2, index = nextIndex++): Entry => ({ index, term, type: EntryType.Normal, data: encodeRequest(req) });
const confEntry = (cc: ConfChange, index = nextIndex++): Entry => ({ index, term: 2, type: EntryType.ConfChange, data: encodeConfChange(cc) });
const put = (id: bigint): InternalRequest => ({ id, kind: 'put', put: { key: Buffer.from('k'), value: Buffer.from('v'), lease: 0n, prevKv: false, ignoreValue: false, ignoreLease: false } });

describe('core/applier', () => {
  beforeEach(() => {
    nextIndex = 1;
  });

  it('hands v3 entries to the state machine with their index and term, and settles their waiters', () => {
    const { applier, kv, waiters, stats, events } = setup();
    waiters.waiting.add(10n);
    applier.applyEntries([entry(put(10n), 3), entry(put(11n), 4)]);
    expect(kv.applied).to.deep.equal([{ kind: 'put', index: 1, term: 3 }, { kind: 'put', index: 2, term: 4 }]);
    expect(waiters.results.get(10n)).to.deep.equal({ result: { revision: 1 }, error: undefined });
    expect(applier.appliedIndex).to.equal(2);
    expect(stats.proposalsApplied).to.equal(2);
    expect(events.applied).to.equal(2);
  });

  it('skips v3 entries the db already holds (at or below the consistent index) and entries already applied', () => {
    const { applier, kv } = setup();
    kv.ci = 5;
    applier.applyEntries([entry(put(1n), 2, 4), entry(put(2n), 2, 5), entry(put(3n), 2, 6)]);
    expect(kv.applied.map((a) => a.index)).to.deep.equal([6]);
    applier.applyEntries([entry(put(3n), 2, 6)]);
    expect(kv.applied.map((a) => a.index)).to.deep.equal([6]);
  });

  it('a conf change adding a member updates the membership, reaches the peer and resolves its waiter', () => {
    const { applier, node, peers, waiters } = setup();
    const ctx = encodeTagged({ name: '', peerURLs: ['http://127.0.0.1:2'], clientURLs: [], isLearner: false, requestId: 77n });
    applier.applyEntries([confEntry({ type: ConfChangeType.AddNode, nodeId: 2n, context: ctx })]);
    expect(node.confChanges).to.have.length(1);
    expect(applier.membership.member(2n)?.peerURLs).to.deep.equal(['http://127.0.0.1:2']);
    expect(peers.log).to.deep.equal(['add 2 http://127.0.0.1:2']);
    expect(waiters.conf.get(77n)?.map((m) => m.id)).to.deep.equal([1n, 2n]);
  });

  it('adding a voter that is a learner promotes it', () => {
    const { applier } = setup([
      { id: SELF, name: 's1', peerURLs: ['http://127.0.0.1:1'], clientURLs: [], isLearner: false },
      { id: 3n, name: 's3', peerURLs: ['http://127.0.0.1:3'], clientURLs: [], isLearner: true },
    ]);
    applier.applyEntries([confEntry({ type: ConfChangeType.AddNode, nodeId: 3n, context: new Uint8Array(0) })]);
    expect(applier.membership.member(3n)?.isLearner).to.equal(false);
  });

  it('removing another member drops its peer; removing this member stops it', () => {
    const { applier, peers, events } = setup([
      { id: SELF, name: 's1', peerURLs: ['http://127.0.0.1:1'], clientURLs: [], isLearner: false },
      { id: 2n, name: 's2', peerURLs: ['http://127.0.0.1:2'], clientURLs: [], isLearner: false },
    ]);
    applier.applyEntries([confEntry({ type: ConfChangeType.RemoveNode, nodeId: 2n, context: new Uint8Array(0) })]);
    expect(applier.membership.member(2n)).to.equal(undefined);
    expect(applier.membership.removed.has(2n)).to.equal(true);
    expect(peers.log).to.deep.equal(['remove 2']);
    expect(events.removed).to.equal(0);
    applier.applyEntries([confEntry({ type: ConfChangeType.RemoveNode, nodeId: SELF, context: new Uint8Array(0) })]);
    expect(events.removed).to.equal(1);
  });

  it('updating a member changes its peer URLs and the transport\'s', () => {
    const { applier, peers } = setup([
      { id: SELF, name: 's1', peerURLs: ['http://127.0.0.1:1'], clientURLs: [], isLearner: false },
      { id: 2n, name: 's2', peerURLs: ['http://127.0.0.1:2'], clientURLs: [], isLearner: false },
    ]);
    applier.applyEntries([confEntry({ type: ConfChangeType.UpdateNode, nodeId: 2n, context: encodeTagged({ peerURLs: ['http://127.0.0.1:22'] }) })]);
    expect(applier.membership.member(2n)?.peerURLs).to.deep.equal(['http://127.0.0.1:22']);
    expect(peers.log).to.deep.equal(['update 2 http://127.0.0.1:22']);
  });

  it('raises and disarms alarms once each', () => {
    const { applier, waiters } = setup();
    waiters.waiting.add(1n).add(2n).add(3n);
    const alarm = (id: bigint, action: 'ACTIVATE' | 'DEACTIVATE'): InternalRequest => ({ id, kind: 'alarm', alarm: { action, memberId: SELF, alarm: 'NOSPACE' } });
    applier.applyEntries([entry(alarm(1n, 'ACTIVATE')), entry(alarm(2n, 'ACTIVATE'))]);
    expect(applier.alarms).to.deep.equal([{ memberId: SELF, alarm: 'NOSPACE' }]);
    applier.applyEntries([entry(alarm(3n, 'DEACTIVATE'))]);
    expect(applier.alarms).to.deep.equal([]);
    expect(waiters.results.get(3n)?.result).to.deep.equal([{ memberId: SELF, alarm: 'NOSPACE' }]);
  });

  it('while CORRUPT is raised, refuses writes and lease changes with the reference error (the entry counts as applied)', () => {
    const { applier, kv, waiters } = setup();
    waiters.waiting.add(11n).add(12n).add(13n).add(14n);
    const corrupt = (id: bigint, action: 'ACTIVATE' | 'DEACTIVATE'): InternalRequest => ({ id, kind: 'alarm', alarm: { action, memberId: 0n, alarm: 'CORRUPT' } });
    const put = (id: bigint): InternalRequest => ({ id, kind: 'put', put: { key: new Uint8Array([1]), value: new Uint8Array([2]), lease: 0n, prevKv: false, ignoreValue: false, ignoreLease: false } });
    applier.applyEntries([entry(corrupt(10n, 'ACTIVATE'))]);
    const refused = entry(put(11n));
    applier.applyEntries([refused, entry({ id: 12n, kind: 'leaseGrant', leaseGrant: { id: 5n, ttl: 10 } })]);
    expect(waiters.results.get(11n)?.error?.message).to.equal('etcdserver: corrupt cluster');
    expect(waiters.results.get(12n)?.error?.message).to.equal('etcdserver: corrupt cluster');
    expect(kv.applied).to.deep.equal([]);
    expect(kv.ci).to.be.greaterThan(refused.index);
    applier.applyEntries([entry(corrupt(13n, 'DEACTIVATE')), entry(put(14n))]);
    expect(waiters.results.get(14n)?.error).to.equal(undefined);
    expect(kv.applied.map((a) => a.kind)).to.deep.equal(['put']);
  });

  it('keeps the cluster version in the membership and the db, and a version above this release is fatal', () => {
    const { applier, kv, events } = setup();
    const cv = (id: bigint, version: string): InternalRequest => ({ id, kind: 'clusterVersionSet', clusterVersionSet: { version } });
    applier.applyEntries([entry(cv(1n, '3.4'))]);
    expect(applier.membership.version).to.equal('3.4');
    expect(Buffer.from(kv.db.get('cluster/clusterVersion')!).toString()).to.equal('3.4');
    expect(events.fatal).to.have.length(0);
    applier.applyEntries([entry(cv(2n, '3.5'))]);
    expect(events.fatal).to.have.length(1);
  });

  it('a downgrade job: kept in the membership and the db, lowers the db\'s cluster version to its target, forces a snapshot', () => {
    const { applier, kv, events } = setup(undefined, '3.6.16');
    const cv = (id: bigint, version: string): InternalRequest => ({ id, kind: 'clusterVersionSet', clusterVersionSet: { version } });
    const job = (id: bigint, enabled: boolean, ver: string): InternalRequest => ({ id, kind: 'downgradeInfoSet', downgradeInfoSet: { enabled, ver } });
    const dbText = (key: string) => Buffer.from(kv.db.get(`cluster/${key}`)!).toString();
    applier.applyEntries([entry(cv(1n, '3.6'))]);
    // replayed history that goes down without a job leaves the db's version where it was
    applier.applyEntries([entry(cv(2n, '3.5')), entry(cv(3n, '3.6'))]);
    expect(dbText('clusterVersion')).to.equal('3.6');
    applier.applyEntries([entry(job(4n, true, '3.5.0'))]);
    expect(applier.membership.downgrade).to.deep.equal({ enabled: true, targetVersion: '3.5.0' });
    expect(dbText('downgrade')).to.equal('{"target-version":"3.5.0","enabled":true}');
    const before = events.snapshots;
    applier.applyEntries([entry(cv(5n, '3.5'))]);
    expect(dbText('clusterVersion')).to.equal('3.5');
    expect(events.snapshots).to.equal(before + 1);
    expect(events.fatal).to.have.length(0);
    applier.applyEntries([entry(job(6n, false, ''))]);
    expect(dbText('downgrade')).to.equal('{"target-version":"","enabled":false}');
    // the job travels in consensus snapshots
    applier.applyEntries([entry(job(7n, true, '3.5.0'))]);
    const b = setup(undefined, '3.6.16');
    b.applier.restore(applier.internalState());
    expect(b.applier.membership.downgrade).to.deep.equal({ enabled: true, targetVersion: '3.5.0' });
  });

  it('a 3.5 member applies a 3.6 cluster version while a downgrade to 3.5 is enabled; without the job it stops', () => {
    const job = (id: bigint, enabled: boolean, ver: string): InternalRequest => ({ id, kind: 'downgradeInfoSet', downgradeInfoSet: { enabled, ver } });
    const cv = (id: bigint, version: string): InternalRequest => ({ id, kind: 'clusterVersionSet', clusterVersionSet: { version } });
    const a = setup(undefined, '3.5.21');
    a.applier.applyEntries([entry(job(1n, true, '3.5.0')), entry(cv(2n, '3.6'))]);
    expect(a.events.fatal).to.have.length(0);
    const c = setup(undefined, '3.5.21');
    c.applier.applyEntries([entry(cv(2n, '3.6'))]);
    expect(c.events.fatal[0].message).to.contain('invalid downgrade; server version is lower than determined cluster version');
  });

  it('the leader\'s first empty entry of its term triggers the version check once', () => {
    const { applier, node, events } = setup();
    const empty = (index: number, term: number): Entry => ({ index, term, type: EntryType.Normal, data: new Uint8Array(0) });
    applier.applyEntries([empty(1, 2)]);
    expect(events.firstCommits).to.equal(0); // a follower
    node.leader = true;
    applier.becameLeader();
    applier.applyEntries([empty(2, 1)]);
    expect(events.firstCommits).to.equal(0); // an entry of an older term
    applier.applyEntries([empty(3, 2), empty(4, 2)]);
    expect(events.firstCommits).to.equal(1);
  });

  it('waiters for an applied index run once it is reached, also through a snapshot', () => {
    const { applier } = setup();
    const ran: number[] = [];
    applier.waitApplied(2, () => ran.push(2));
    applier.waitApplied(9, () => ran.push(9));
    applier.applyEntries([entry(put(1n)), entry(put(2n))]);
    expect(ran).to.deep.equal([2]);
    applier.snapshotApplied(10);
    expect(ran).to.deep.equal([2, 9]);
    expect(applier.appliedIndex).to.equal(10);
  });

  it('the internal state survives a snapshot round trip, and a restore reaches every other member', () => {
    const a = setup([
      { id: SELF, name: 's1', peerURLs: ['http://127.0.0.1:1'], clientURLs: [], isLearner: false },
      { id: 2n, name: 's2', peerURLs: ['http://127.0.0.1:2'], clientURLs: [], isLearner: false },
    ]);
    a.applier.applyEntries([entry({ id: 1n, kind: 'alarm', alarm: { action: 'ACTIVATE', memberId: 2n, alarm: 'NOSPACE' } })]);
    const b = setup();
    b.applier.restore(a.applier.internalState());
    expect(b.applier.membership.list().map((m) => m.id)).to.deep.equal([1n, 2n]);
    expect(b.applier.alarms).to.deep.equal([{ memberId: 2n, alarm: 'NOSPACE' }]);
    expect(b.peers.log).to.deep.equal(['add 2 http://127.0.0.1:2']);
  });
});

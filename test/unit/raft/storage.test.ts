// MemoryStorage: the log storage contract the consensus core reads from.

import { expect } from 'chai';
import type { Entry } from '../../../server/raft/index.js';
import { CompactedError, ConfChangeType, decodeConfChange, encodeConfChange, MemoryStorage, RaftError, UnavailableError } from '../../../server/raft/index.js';

const ent = (index: number, term: number, n = 1): Entry => ({ index, term, type: 0, data: new Uint8Array(n) });

describe('raft: MemoryStorage', () => {
  it('appends, truncates conflicting suffixes and reads back by index', () => {
    const s = new MemoryStorage();
    s.append([ent(1, 1), ent(2, 1), ent(3, 2)]);
    expect([s.firstIndex(), s.lastIndex(), s.term(3)]).to.deep.equal([1, 3, 2]);
    s.append([ent(3, 3), ent(4, 3)]);
    expect(s.entries(1, 5).map((e) => e.term)).to.deep.equal([1, 1, 3, 3]);
    expect(s.entries(1, 5, 20).length).to.equal(1); // 17 bytes each: only one fits in 20
    expect(() => s.entries(2, 7)).to.throw(UnavailableError);
    expect(() => s.append([ent(7, 3)])).to.throw(RaftError);
  });

  it('snapshots, compacts and reports compacted indexes', () => {
    const s = new MemoryStorage();
    s.append([1, 2, 3, 4, 5].map((i) => ent(i, 1)));
    const snap = s.createSnapshot(3, { voters: [1n], learners: [] }, new Uint8Array([9]));
    expect(snap.metadata).to.deep.include({ index: 3, term: 1 });
    s.compact(3);
    expect([s.firstIndex(), s.lastIndex()]).to.deep.equal([4, 5]);
    expect(() => s.entries(3, 5)).to.throw(CompactedError);
    expect(() => s.term(2)).to.throw(CompactedError);
    expect(s.term(3)).to.equal(1);
    try {
      s.compact(2);
      expect.fail('compacting twice should throw');
    } catch (e) {
      expect((e as RaftError).code).to.equal('Compacted');
    }
    expect(() => s.createSnapshot(2, undefined, new Uint8Array())).to.throw(RaftError, /older/);
    expect(s.initialState().confState.voters).to.deep.equal([1n]);
  });

  it('applySnapshot replaces the log; append skips already-compacted entries', () => {
    const s = new MemoryStorage();
    s.append([ent(1, 1), ent(2, 1)]);
    s.applySnapshot({ metadata: { index: 10, term: 4, confState: { voters: [1n, 2n], learners: [3n] } }, data: new Uint8Array() });
    expect([s.firstIndex(), s.lastIndex(), s.term(10)]).to.deep.equal([11, 10, 4]);
    s.append([ent(9, 4), ent(10, 4), ent(11, 4)]);
    expect(s.lastIndex()).to.equal(11);
    expect(s.initialState().confState.learners).to.deep.equal([3n]);
  });

  it('encodes ConfChange like raftpb and decodes it back', () => {
    const cc = { type: ConfChangeType.AddLearnerNode, nodeId: 0xfedcba9876543210n, context: new TextEncoder().encode('{"name":"a"}') };
    const bytes = encodeConfChange(cc);
    expect(Array.from(bytes.slice(0, 4))).to.deep.equal([0x08, 0x00, 0x10, 0x03]);
    expect(decodeConfChange(bytes)).to.deep.equal(cc);
  });
});

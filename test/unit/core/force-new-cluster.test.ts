// The log a member restarts from under --force-new-cluster: uncommitted entries dropped, the other members
// (from the snapshot and the committed conf changes) removed by committed conf changes at the current term.
import { expect } from 'chai';
import { decodeConfChange, encodeConfChange } from '../../../server/raft/index.js';
import { ConfChangeType, EntryType, type Entry } from '../../../server/raft/types.js';
import { membersInLog, standaloneLog } from '../../../server/core/force-new-cluster.js';

const normal = (index: number, term = 2): Entry => ({ index, term, type: EntryType.Normal, data: new Uint8Array([index]) });
const cc = (index: number, type: ConfChangeType, nodeId: bigint, term = 2): Entry => ({ index, term, type: EntryType.ConfChange, data: encodeConfChange({ type, nodeId, context: new Uint8Array(0) }) });
const changes = (es: Entry[]) => es.map((e) => ({ index: e.index, term: e.term, ...decodeConfChange(e.data) })).map(({ index, term, type, nodeId }) => ({ index, term, type, nodeId }));

describe('force-new-cluster: the standalone log', () => {
  it('members come from the snapshot (voters and learners) and the conf changes after it', () => {
    const log = [cc(11, ConfChangeType.AddLearnerNode, 5n), cc(12, ConfChangeType.RemoveNode, 2n), cc(13, ConfChangeType.AddNode, 5n), cc(14, ConfChangeType.UpdateNode, 3n)];
    expect(membersInLog({ voters: [3n, 1n, 2n], learners: [4n] }, log)).to.deep.equal([1n, 3n, 4n, 5n]);
  });

  it('drops the uncommitted tail and commits a removal of every other member at the current term', () => {
    const entries = [normal(11), cc(12, ConfChangeType.AddLearnerNode, 4n), normal(13), normal(14), cc(15, ConfChangeType.RemoveNode, 2n)];
    const out = standaloneLog(1n, new Uint8Array([7]), { voters: [1n, 2n, 3n], learners: [] }, { term: 5, vote: 3n, commit: 13 }, entries);
    expect(out.discardedFrom).to.equal(14);
    expect(out.discarded).to.equal(2);
    // 2 is still a member: its removal at 15 was never committed.
    expect(changes(out.appended)).to.deep.equal([
      { index: 14, term: 5, type: ConfChangeType.RemoveNode, nodeId: 2n },
      { index: 15, term: 5, type: ConfChangeType.RemoveNode, nodeId: 3n },
      { index: 16, term: 5, type: ConfChangeType.RemoveNode, nodeId: 4n },
    ]);
    expect(out.entries.map((e) => e.index)).to.deep.equal([11, 12, 13, 14, 15, 16]);
    expect(out.hardState).to.deep.equal({ term: 5, vote: 3n, commit: 16 });
  });

  it('adds itself first when the log does not have it, so the voters never become empty', () => {
    const out = standaloneLog(9n, new Uint8Array([7]), { voters: [1n], learners: [] }, { term: 3, vote: 0n, commit: 20 }, []);
    expect(out.discardedFrom).to.equal(undefined);
    expect(changes(out.appended)).to.deep.equal([
      { index: 21, term: 3, type: ConfChangeType.AddNode, nodeId: 9n },
      { index: 22, term: 3, type: ConfChangeType.RemoveNode, nodeId: 1n },
    ]);
    expect(decodeConfChange(out.appended[0].data).context).to.deep.equal(new Uint8Array([7]));
    expect(out.hardState.commit).to.equal(22);
  });

  it('a member already alone appends nothing', () => {
    const out = standaloneLog(1n, new Uint8Array(0), { voters: [1n], learners: [] }, { term: 3, vote: 1n, commit: 4 }, [normal(4)]);
    expect(out.appended).to.deep.equal([]);
    expect(out.hardState.commit).to.equal(4);
  });
});

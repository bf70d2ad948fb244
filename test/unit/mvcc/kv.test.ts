// The "key" bucket value in the reference's encoding: the bytes snapshots carry, and the checksum HashKV takes over
// them without building them, must agree for every shape of entry.
import { expect } from 'chai';
import { crc32c } from '../../../server/storage/crc.js';
import { crcReferenceKv, encodeKv, referenceKvBytes } from '../../../server/mvcc/kv.js';
import { pbRead } from '../../../server/storage/protobuf.js';

describe('mvcc/kv: the reference encoding of an entry', () => {
  const entries = [
    { key: Buffer.from('a'), value: Buffer.from('v'), createRevision: 2, modRevision: 3, version: 2, lease: 0n },
    { key: Buffer.from('big'), value: Buffer.alloc(70_000, 7), createRevision: 2 ** 40, modRevision: 2 ** 40 + 5, version: 300, lease: 0x7fffffffffffffffn },
    { key: Buffer.from('empty'), value: Buffer.alloc(0), createRevision: 5, modRevision: 5, version: 1, lease: -1n },
  ];

  it('crcReferenceKv is the crc32c of referenceKvBytes, for puts and tombstones, from any running crc', () => {
    for (const e of entries) {
      const value = encodeKv(e);
      for (const tombstone of [false, true]) {
        for (const from of [0, 12345]) expect(crcReferenceKv(from, value, tombstone)).to.equal(crc32c(referenceKvBytes(value, tombstone), from));
      }
    }
  });

  it('writes mvccpb.KeyValue fields 1-6, zero fields left out; a tombstone is the key alone', () => {
    const m = pbRead(referenceKvBytes(encodeKv(entries[0]), false));
    expect([...m.keys()]).to.deep.equal([1, 2, 3, 4, 5]);
    expect(m.get(3)).to.deep.equal([3n]);
    expect([...pbRead(referenceKvBytes(encodeKv(entries[1]), true)).keys()]).to.deep.equal([1]);
  });
});

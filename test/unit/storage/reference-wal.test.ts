// The reader of the reference's WAL (frames, the CRC-32C chain, torn tails) and the translation of its entries
// into svc's request encoding, on segments written here byte by byte in the reference's format.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readReferenceWal, isReferenceWalSegment, ReferenceWalError, REF_CRC, REF_ENTRY, REF_METADATA, REF_SNAPSHOT, REF_STATE } from '../../../server/storage/reference-wal.js';
import { crc32c } from '../../../server/storage/crc.js';
import { translateEntry } from '../../../server/cluster/convert-reference.js';
import { decodeRequest, decodeTagged } from '../../../server/core/requests.js';
import { decodeConfChange, encodeConfChange } from '../../../server/raft/index.js';
import { EntryType, type Entry } from '../../../server/raft/types.js';

function varint(n: bigint): number[] {
  const out: number[] = [];
  while (n >= 0x80n) {
    out.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  out.push(Number(n));
  return out;
}

/** A protobuf message from [field, value] pairs (numbers as varints, buffers length-delimited). */
function pb(...fields: Array<[number, bigint | number | Buffer | string]>): Buffer {
  const parts: number[] = [];
  for (const [f, v] of fields) {
    if (typeof v === 'bigint' || typeof v === 'number') parts.push(...varint(BigInt(f << 3)), ...varint(BigInt(v)));
    else {
      const b = Buffer.from(v);
      parts.push(...varint(BigInt((f << 3) | 2)), ...varint(BigInt(b.length)), ...b);
    }
  }
  return Buffer.from(parts);
}

/** Writes records in the reference's framing, chaining the CRC as it does. */
class SegmentWriter {
  private parts: Buffer[] = [];
  crc = 0;
  record(type: number, data: Buffer = Buffer.alloc(0)): this {
    if (type !== REF_CRC) this.crc = crc32c(data, this.crc);
    const fields: Array<[number, bigint | number | Buffer]> = [[1, type], [2, this.crc]];
    if (data.length > 0) fields.push([3, data]);
    const rec = pb(...fields);
    const pad = (8 - (rec.length % 8)) % 8;
    const head = Buffer.alloc(8);
    head.writeBigUInt64LE(BigInt(rec.length) | (pad > 0 ? BigInt(0x80 | pad) << 56n : 0n));
    this.parts.push(head, rec, Buffer.alloc(pad));
    return this;
  }
  bytes(): Buffer {
    return Buffer.concat([...this.parts, Buffer.alloc(4096)]); // the preallocated, unwritten end
  }
}

const entry = (index: number, term: number, data: Buffer, type = EntryType.Normal) => pb([1, type], [2, term], [3, index], [4, data]);

describe('the reference\'s WAL', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-refwal-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function twoSegments(): { first: SegmentWriter; second: SegmentWriter } {
    const first = new SegmentWriter()
      .record(REF_CRC)
      .record(REF_METADATA, pb([1, 0xbdae9bbc11dd390dn], [2, 0xd1cfaf999eb97a2an]))
      .record(REF_SNAPSHOT, pb([1, 0], [2, 0]))
      .record(REF_ENTRY, entry(1, 1, Buffer.from('one')))
      .record(REF_ENTRY, entry(2, 1, Buffer.from('two')))
      .record(REF_STATE, pb([1, 1], [2, 5], [3, 2]));
    // the next segment starts with the running checksum; entry 2 overwritten by a later term
    const second = new SegmentWriter();
    second.crc = first.crc;
    second.record(REF_CRC).record(REF_ENTRY, entry(2, 2, Buffer.from('two-b'))).record(REF_ENTRY, entry(3, 2, Buffer.from('three')));
    second.record(REF_STATE, pb([1, 2], [2, 5], [3, 3]));
    return { first, second };
  }

  it('reads ids, the last hard state and the surviving entries across segments', () => {
    const { first, second } = twoSegments();
    writeFileSync(join(dir, '0000000000000000-0000000000000000.wal'), first.bytes());
    writeFileSync(join(dir, '0000000000000001-0000000000000003.wal'), second.bytes());
    expect(isReferenceWalSegment(join(dir, '0000000000000000-0000000000000000.wal'))).to.equal(true);
    const w = readReferenceWal(dir);
    expect(w.memberId).to.equal(0xbdae9bbc11dd390dn);
    expect(w.clusterId).to.equal(0xd1cfaf999eb97a2an);
    expect(w.hardState).to.deep.equal({ term: 2, vote: 5n, commit: 3 });
    expect(w.entries.map((e) => [e.index, e.term, Buffer.from(e.data).toString()])).to.deep.equal([[1, 1, 'one'], [2, 2, 'two-b'], [3, 2, 'three']]);
    expect(w.tornTail).to.equal(undefined);
  });

  it('refuses a flipped byte (crc mismatch) and a broken chain between segments', () => {
    const { first, second } = twoSegments();
    const a = first.bytes();
    a[a.indexOf('two') + 1] ^= 1;
    writeFileSync(join(dir, '0000000000000000-0000000000000000.wal'), a);
    writeFileSync(join(dir, '0000000000000001-0000000000000003.wal'), second.bytes());
    expect(() => readReferenceWal(dir)).to.throw(ReferenceWalError, /crc mismatch in .*0000000000000000-0000000000000000\.wal at offset \d+/);

    const other = new SegmentWriter();
    other.crc = 12345;
    writeFileSync(join(dir, '0000000000000000-0000000000000000.wal'), first.bytes());
    writeFileSync(join(dir, '0000000000000001-0000000000000003.wal'), other.record(REF_CRC).bytes());
    expect(() => readReferenceWal(dir)).to.throw(ReferenceWalError, /crc chain broken/);
  });

  it('drops a torn last record of the last segment, as the reference does', () => {
    const { first } = twoSegments();
    first.record(REF_ENTRY, entry(3, 1, Buffer.alloc(1500, 7)));
    const b = first.bytes();
    // the last record's final sector never reached the disk
    const end = b.length - 4096;
    b.fill(0, end - 600, end);
    writeFileSync(join(dir, '0000000000000000-0000000000000000.wal'), b);
    const w = readReferenceWal(dir);
    expect(w.entries.map((e) => e.index)).to.deep.equal([1, 2]);
    expect(w.tornTail).to.match(/torn|runs past/);
  });

  it('svc\'s own segments are not taken for the reference\'s', () => {
    const svcSeg = Buffer.alloc(64);
    svcSeg.writeUInt32LE(5, 0);
    svcSeg[8] = 4; // svc's frame: length, crc, then the record type
    writeFileSync(join(dir, 'x.wal'), svcSeg);
    expect(isReferenceWalSegment(join(dir, 'x.wal'))).to.equal(false);
  });
});

describe('the reference\'s entries in svc\'s encoding', () => {
  const e = (data: Buffer, type = EntryType.Normal): Entry => ({ index: 7, term: 3, type, data });

  it('a put, a lease grant and the cluster version (InternalRaftRequest), keeping index and term', () => {
    const put = translateEntry(e(pb([1, 42], [4, pb([1, 'k'], [2, 'v'], [3, 9])])));
    expect([put.index, put.term]).to.deep.equal([7, 3]);
    const r = decodeRequest(put.data);
    expect(r.kind).to.equal('put');
    if (r.kind === 'put') expect([Buffer.from(r.put.key).toString(), Buffer.from(r.put.value).toString(), r.put.lease]).to.deep.equal(['k', 'v', 9n]);
    const grant = decodeRequest(translateEntry(e(pb([1, 43], [8, pb([1, 600], [2, 77])]))).data);
    expect(grant).to.deep.include({ kind: 'leaseGrant', leaseGrant: { id: 77n, ttl: 600 } });
    const cv = decodeRequest(translateEntry(e(pb([1, 44], [1300, pb([1, '3.5.0'])]))).data);
    expect(cv).to.deep.include({ kind: 'clusterVersionSet', clusterVersionSet: { version: '3.5' } });
  });

  it('a bare v2 request (member attributes), a conf change\'s member, an empty entry', () => {
    const attrs = decodeRequest(translateEntry(e(pb([1, 5], [2, 'PUT'], [3, '/0/members/bdae9bbc11dd390d/attributes'], [4, '{"name":"a","clientURLs":["http://x:1"]}']))).data);
    expect(attrs).to.deep.include({ kind: 'memberAttrSet', memberAttrSet: { memberId: 0xbdae9bbc11dd390dn, name: 'a', clientURLs: ['http://x:1'] } });
    const ctx = Buffer.from('{"id":13668033151171901709,"peerURLs":["http://p:2"],"name":"a"}');
    const cc = decodeConfChange(translateEntry(e(Buffer.from(encodeConfChange({ type: 0, nodeId: 13668033151171901709n, context: ctx })), EntryType.ConfChange)).data);
    expect(decodeTagged(cc.context)).to.deep.equal({ id: 13668033151171901709n, name: 'a', peerURLs: ['http://p:2'], clientURLs: [], isLearner: false });
    expect(translateEntry(e(Buffer.alloc(0))).data.length).to.equal(0);
  });

  it('refuses what it cannot carry over (an auth change), naming it', () => {
    expect(() => translateEntry(e(pb([1, 9], [1100, pb([1, 'bob'])])))).to.throw(/an auth change/);
  });
});

// The bbolt file format (the reference's database and snapshot format): whatever the writer writes, the reader
// reads back unchanged, and it passes the consistency check the reference's `snapshot status` runs.
import { expect } from 'chai';
import fc from 'fast-check';
import { writeBolt, type BoltBucketInput } from '../../../server/storage/bbolt/writer.js';
import { readBolt, readFreelist, readMeta, checkBolt, type BoltBucket } from '../../../server/storage/bbolt/reader.js';
import { encodeMeta, encodePageHeader, FREELIST_PAGE, LEAF_PAGE, META_PAGE, PAGE_HEADER_SIZE } from '../../../server/storage/bbolt/page.js';

const PAGE = 4096;

/** A bucket as plain comparable data: hex keys and values, nested buckets by name. */
interface Plain {
  kvs: Record<string, string>;
  buckets: Record<string, Plain>;
}

function plainIn(b: BoltBucketInput): Plain {
  const kvs: Record<string, string> = {};
  for (const kv of b.kvs) kvs[Buffer.from(kv.key).toString('hex')] = Buffer.from(kv.value).toString('hex');
  const buckets: Record<string, Plain> = {};
  for (const c of b.buckets ?? []) buckets[Buffer.from(c.name).toString('hex')] = plainIn(c);
  return { kvs, buckets };
}

function plainOut(b: BoltBucket): Plain {
  const kvs: Record<string, string> = {};
  for (const kv of b.kvs) kvs[kv.key.toString('hex')] = kv.value.toString('hex');
  const buckets: Record<string, Plain> = {};
  for (const c of b.buckets) buckets[c.name.toString('hex')] = plainOut(c);
  return { kvs, buckets };
}

const key = fc.uint8Array({ minLength: 1, maxLength: 40 });
/** Mostly small values, some larger than a page (overflow pages). */
const value = fc.oneof(
  { weight: 8, arbitrary: fc.uint8Array({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.integer({ min: PAGE, max: 3 * PAGE + 123 }).map((n) => new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff)) },
);
const kvs = fc.uniqueArray(fc.record({ key, value }), { maxLength: 300, selector: (kv) => Buffer.from(kv.key).toString('hex') });

const leafBucket: fc.Arbitrary<BoltBucketInput> = fc.record({ name: key, kvs });
const bucket: fc.Arbitrary<BoltBucketInput> = fc.record({
  name: key,
  kvs,
  // nested buckets must not share a name with a key of their parent
  buckets: fc.uniqueArray(leafBucket, { maxLength: 3, selector: (b) => Buffer.from(b.name).toString('hex') }),
}).map((b) => {
  const names = new Set(b.buckets.map((c) => Buffer.from(c.name).toString('hex')));
  return { ...b, kvs: b.kvs.filter((kv) => !names.has(Buffer.from(kv.key).toString('hex'))) };
});
const bucketSet = fc.uniqueArray(bucket, { maxLength: 12, selector: (b) => Buffer.from(b.name).toString('hex') });

function roundTrip(buckets: BoltBucketInput[]): void {
  const file = writeBolt(buckets);
  expect(file.length % PAGE).to.equal(0);
  expect(checkBolt(file)).to.deep.equal([]);
  const read = readBolt(file);
  const want: Record<string, Plain> = {};
  for (const b of buckets) want[Buffer.from(b.name).toString('hex')] = plainIn(b);
  const got: Record<string, Plain> = {};
  for (const b of read.buckets) got[b.name.toString('hex')] = plainOut(b);
  expect(got).to.deep.equal(want);
  // buckets and keys come back in byte order
  const names = read.buckets.map((b) => b.name);
  expect(names).to.deep.equal([...names].sort(Buffer.compare));
}

describe('bbolt format: writer and reader', function () {
  this.timeout(120000);

  it('reads back any set of buckets it wrote (large values, nested, empty and binary keys) and passes the consistency check', () => {
    fc.assert(fc.property(bucketSet, (buckets) => roundTrip(buckets)), { numRuns: 60 });
  });

  it('writes many buckets, a deep tree and values of several megabytes', () => {
    const many: BoltBucketInput[] = Array.from({ length: 300 }, (_, i) => ({ name: Buffer.from(`bucket-${i}`), kvs: i % 7 === 0 ? [] : [{ key: Buffer.from('k'), value: Buffer.from(`v${i}`) }] }));
    const big = Buffer.alloc(5 * 1024 * 1024 + 17, 0xab);
    // 60000 keys of 100-byte values need three levels of pages
    const deep = Array.from({ length: 60000 }, (_, i) => ({ key: Buffer.from(i.toString(16).padStart(8, '0')), value: Buffer.alloc(100, i & 0xff) }));
    roundTrip([...many, { name: Buffer.from('big'), kvs: [{ key: Buffer.from('b'), value: big }] }, { name: Buffer.from('deep'), kvs: deep }]);
  });

  it('stores small buckets inline and large ones in pages of their own', () => {
    const file = writeBolt([
      { name: Buffer.from('empty'), kvs: [] },
      { name: Buffer.from('small'), kvs: [{ key: Buffer.from('a'), value: Buffer.from('1') }] },
      { name: Buffer.from('large'), kvs: [{ key: Buffer.from('a'), value: Buffer.alloc(2000) }] },
    ]);
    // meta, meta, freelist, the large bucket's leaf, the root bucket's leaf (holding the two inline buckets)
    expect(file.length / PAGE).to.equal(5);
    expect(readBolt(file).buckets.map((b) => [b.name.toString(), b.kvs.length])).to.deep.equal([['empty', 0], ['large', 1], ['small', 1]]);
  });

  it('rejects keys out of order and an empty key', () => {
    expect(() => writeBolt([{ name: Buffer.from('b'), kvs: [{ key: new Uint8Array(0), value: Buffer.from('x') }] }])).to.throw(/empty key/);
    expect(() => writeBolt([{ name: Buffer.from('b'), kvs: [{ key: Buffer.from('a'), value: Buffer.from('x') }, { key: Buffer.from('a'), value: Buffer.from('y') }] }])).to.throw(/duplicate|ascending/);
  });

  it('opens with the valid meta of the higher txid, and with the other when one is damaged', () => {
    const file = writeBolt([{ name: Buffer.from('b'), kvs: [{ key: Buffer.from('k'), value: Buffer.from('v') }] }]);
    const metas = [0, 1].map((p) => readMeta(Buffer.concat([file.subarray(p * PAGE, (p + 1) * PAGE), file.subarray(PAGE)])));
    expect(readMeta(file).txid).to.equal(2n);
    const damaged = Buffer.from(file);
    damaged[PAGE_HEADER_SIZE + 20] ^= 0xff; // page 0's root field: its checksum no longer matches
    expect(readMeta(damaged).txid).to.equal(1n);
    expect(readBolt(damaged).buckets[0].kvs[0].value.toString()).to.equal('v');
    damaged[PAGE + PAGE_HEADER_SIZE + 20] ^= 0xff;
    expect(() => readMeta(damaged)).to.throw(/checksum/);
    expect(metas.length).to.equal(2);
    expect(() => readBolt(Buffer.from('not a database at all, not a database at all'))).to.throw(/not a valid bbolt database/);
  });

  it('reads a freelist in the overflow form (count 0xFFFF, the real count in the first word) and ignores the free pages', () => {
    // pages: 0,1 meta; 2 root leaf; 3.. the freelist (its ids need 129 pages); free ids point at pages 3.. too
    const nFree = 70000;
    const flPages = Math.ceil((PAGE_HEADER_SIZE + 8 + nFree * 8) / PAGE);
    const hwm = 3 + flPages;
    const file = Buffer.alloc(hwm * PAGE);
    for (const id of [0, 1]) {
      encodePageHeader(file, id * PAGE, id, META_PAGE, 0, 0);
      encodeMeta(file, id * PAGE + PAGE_HEADER_SIZE, { pageSize: PAGE, flags: 0, root: 2, sequence: 0n, freelist: 3, pgid: hwm, txid: BigInt(id + 5) });
    }
    encodePageHeader(file, 2 * PAGE, 2, LEAF_PAGE, 0, 0);
    encodePageHeader(file, 3 * PAGE, 3, FREELIST_PAGE, 0xffff, flPages - 1);
    file.writeBigUInt64LE(BigInt(nFree), 3 * PAGE + PAGE_HEADER_SIZE);
    for (let i = 0; i < nFree; i++) file.writeBigUInt64LE(BigInt(1000 + i), 3 * PAGE + PAGE_HEADER_SIZE + 8 + i * 8);
    const ids = readFreelist(file);
    expect(ids.length).to.equal(nFree);
    expect(ids[0]).to.equal(1000);
    expect(ids[nFree - 1]).to.equal(1000 + nFree - 1);
    expect(readBolt(file).buckets).to.deep.equal([]);
  });

  it('reports what the reference\'s check reports: a page both reachable and freed, and an unreachable page not freed', () => {
    const file = writeBolt([{ name: Buffer.from('b'), kvs: [{ key: Buffer.from('a'), value: Buffer.alloc(3000) }] }]);
    // add a page nobody points at: unreachable unfreed
    const grown = Buffer.concat([file, Buffer.alloc(PAGE)]);
    for (const id of [0, 1]) {
      const m = readMeta(file);
      encodeMeta(grown, id * PAGE + PAGE_HEADER_SIZE, { pageSize: PAGE, flags: 0, root: m.root, sequence: 0n, freelist: m.freelist, pgid: m.pgid + 1, txid: BigInt(id + 1) });
    }
    expect(checkBolt(grown)).to.deep.equal([`page ${file.length / PAGE}: unreachable unfreed`]);
    // free the bucket's leaf page (page 3) while it is still in use
    const freed = Buffer.from(file);
    freed.writeUInt16LE(1, 2 * PAGE + 10);
    freed.writeBigUInt64LE(3n, 2 * PAGE + PAGE_HEADER_SIZE);
    expect(checkBolt(freed)).to.deep.equal(['page 3: reachable freed']);
  });
});

import { expect } from 'chai';
import type { Backend } from '../../../server/storage/backend.js';
import { MvccStore } from '../../../server/mvcc/kvstore.js';
import { MvccError } from '../../../server/mvcc/errors.js';
import { evaluateCompare, evaluateCompareOn, CompareResult, CompareTarget } from '../../../server/mvcc/compare.js';
import { b, openStore, s, tempDir } from './helpers.js';

function keys(r: { kvs: { key: Uint8Array }[] }): string[] {
  return r.kvs.map((kv) => s(kv.key));
}

describe('mvcc store', () => {
  let t: ReturnType<typeof tempDir>;
  let be: Backend;
  let st: MvccStore;
  beforeEach(() => {
    t = tempDir();
    ({ be, st } = openStore(t.dir));
  });
  afterEach(() => {
    be.close();
    t.cleanup();
  });

  it('starts at revision 1 and gives each put a new revision, version and create revision', () => {
    expect(st.rev()).to.equal(1);
    expect(st.put(b('foo'), b('bar')).rev).to.equal(2);
    const r1 = st.range(b('foo'));
    expect(r1.kvs[0]).to.deep.include({ createRevision: 2, modRevision: 2, version: 1, lease: 0n });
    expect(s(r1.kvs[0].value)).to.equal('bar');
    const { rev, prevKv } = st.put(b('foo'), b('baz'));
    expect(rev).to.equal(3);
    expect(s(prevKv!.value)).to.equal('bar');
    expect(st.range(b('foo')).kvs[0]).to.deep.include({ createRevision: 2, modRevision: 3, version: 2 });
    expect(st.range(b('foo')).rev).to.equal(3);
  });

  it('a put that does not ask for the previous kv writes the same revision, version, create revision and lease', () => {
    st.put(b('foo'), b('bar'));
    const key = b('foo');
    const value = b('baz');
    const tw = st.write();
    expect(tw.put(key, value, 0n, false)).to.equal(undefined);
    const ev = tw.changes()[0];
    expect(ev.prevKv).to.equal(undefined);
    expect(ev.prevRev).to.deep.equal({ main: 2, sub: 0 });
    tw.end();
    // the store kept its own copies of the caller's key and value
    key.fill(0);
    value.fill(0);
    expect(s(ev.kv.key)).to.equal('foo');
    expect(s(ev.kv.value)).to.equal('baz');
    expect(st.range(b('foo')).kvs[0]).to.deep.include({ createRevision: 2, modRevision: 3, version: 2, lease: 0n });
    expect(s(st.range(b('foo')).kvs[0].value)).to.equal('baz');
    expect(s(st.prevKvOf(ev)!.value)).to.equal('bar');
  });

  it('ranges: single key, prefix, from-key, limit, count-only, keys-only', () => {
    for (const k of ['a', 'b', 'b1', 'b2', 'c', 'd']) st.put(b(k), b(`v-${k}`));
    expect(keys(st.range(b('b')))).to.deep.equal(['b']);
    expect(keys(st.range(b('b'), b('c')))).to.deep.equal(['b', 'b1', 'b2']);
    expect(keys(st.range(b('c'), b('\0')))).to.deep.equal(['c', 'd']);
    expect(keys(st.range(b('\0'), b('\0')))).to.deep.equal(['a', 'b', 'b1', 'b2', 'c', 'd']);
    const lim = st.range(b('a'), b('\0'), { limit: 2 });
    expect(keys(lim)).to.deep.equal(['a', 'b']);
    expect(lim.count).to.equal(6);
    const cnt = st.range(b('b'), b('c'), { countOnly: true });
    expect(cnt.kvs).to.deep.equal([]);
    expect(cnt.count).to.equal(3);
    const ko = st.range(b('a'), b('b'), { keysOnly: true });
    expect(keys(ko)).to.deep.equal(['a']);
    expect(ko.kvs[0].value.byteLength).to.equal(0);
    expect(st.range(b('zz')).kvs).to.deep.equal([]);
    expect(st.range(b('c'), b('a')).count).to.equal(0);
  });

  it('a write txn makes one main revision; reads inside see its writes', () => {
    const tw = st.write();
    tw.put(b('x'), b('1'));
    tw.put(b('y'), b('1'));
    tw.put(b('x'), b('2'));
    const inside = tw.range(b('x'));
    expect(inside.kvs[0]).to.deep.include({ modRevision: 2, version: 2 });
    expect(st.rev()).to.equal(1);
    tw.end();
    expect(st.rev()).to.equal(2);
    expect(() => {
      const a = st.write();
      try {
        st.write();
      } finally {
        a.end();
      }
    }).to.throw(MvccError);
    // A txn without changes does not move the revision.
    const empty = st.write();
    empty.range(b('x'));
    empty.end();
    expect(st.rev()).to.equal(2);
  });

  it('delete and re-create start a new generation; historical reads see the old one', () => {
    st.put(b('k'), b('1')); // 2
    st.put(b('k'), b('2')); // 3
    const del = st.deleteRange(b('k')); // 4
    expect(del.rev).to.equal(4);
    expect(s(del.deleted[0].value)).to.equal('2');
    expect(st.range(b('k')).kvs).to.deep.equal([]);
    st.put(b('k'), b('3')); // 5
    expect(st.range(b('k')).kvs[0]).to.deep.include({ createRevision: 5, modRevision: 5, version: 1 });
    expect(st.range(b('k'), undefined, { rev: 3 }).kvs[0]).to.deep.include({ createRevision: 2, version: 2 });
    expect(st.range(b('k'), undefined, { rev: 4 }).kvs).to.deep.equal([]);
    expect(s(st.range(b('k'), undefined, { rev: 2 }).kvs[0].value)).to.equal('1');
    // Deleting nothing makes no revision.
    expect(st.deleteRange(b('nope')).rev).to.equal(5);
    expect(() => st.range(b('k'), undefined, { rev: 6 })).to.throw('mvcc: required revision is a future revision');
  });

  it('deleteRange over a range deletes every live key in it under one revision', () => {
    for (const k of ['p/1', 'p/2', 'p/3', 'q']) st.put(b(k), b('v'));
    const r = st.deleteRange(b('p/'), b('p0'));
    expect(r.deleted.map((kv) => s(kv.key))).to.deep.equal(['p/1', 'p/2', 'p/3']);
    expect(r.rev).to.equal(6);
    expect(keys(st.range(b('\0'), b('\0')))).to.deep.equal(['q']);
  });

  it('compaction: older reads fail, the latest revision of each key stays, compacting twice fails', async () => {
    st.put(b('a'), b('1')); // 2
    st.put(b('a'), b('2')); // 3
    st.put(b('b'), b('1')); // 4
    st.deleteRange(b('b')); // 5
    st.put(b('c'), b('1')); // 6
    const before = st.hashByRev(4).hash;
    const hashAt6 = st.hashByRev(6).hash;
    const { done } = st.compact(5);
    expect(st.compactRev()).to.equal(5);
    expect(() => st.range(b('a'), undefined, { rev: 4 })).to.throw('mvcc: required revision has been compacted');
    try {
      st.range(b('a'), undefined, { rev: 2 });
      expect.fail('no error');
    } catch (err) {
      expect((err as MvccError).code).to.equal('COMPACTED');
    }
    expect(s(st.range(b('a'), undefined, { rev: 5 }).kvs[0].value)).to.equal('2');
    expect(keys(st.range(b('\0'), b('\0')))).to.deep.equal(['a', 'c']);
    expect(() => st.compact(5)).to.throw('mvcc: required revision has been compacted');
    expect(() => st.compact(100)).to.throw('mvcc: required revision is a future revision');
    expect(() => st.hashByRev(4)).to.throw('mvcc: required revision has been compacted');
    expect(before).to.be.a('number');
    // The old revisions leave the backend in the background: then only a:3 and c:6 remain (b's tombstone
    // at 5 goes too). HashKV at 6 does not depend on how far that got.
    const h6 = st.hashByRev(6).hash;
    await done;
    expect(be.readTx().range('key', new Uint8Array(0), null).length).to.equal(2);
    expect(st.hashByRev(6).hash).to.equal(h6);
    expect(hashAt6).to.be.a('number');
  });

  it('a large compaction runs in batches, and resumes after a reopen if interrupted', async () => {
    for (let i = 0; i < 5000; i++) st.put(b(`k${i % 10}`), b(`v${i}`));
    const { done } = st.compact(4000);
    // Interrupted right away: the backend closes before the background deletion ran.
    be.close();
    await done;
    ({ be, st } = openStore(t.dir));
    expect(st.compactRev()).to.equal(4000);
    await st.compactionsDone();
    // 10 kept revisions at or below 4000, plus the 1001 revisions after it.
    expect(be.readTx().range('key', new Uint8Array(0), null).length).to.equal(10 + 1001);
    be.close();
    ({ be, st } = openStore(t.dir));
    expect(st.compactRev()).to.equal(4000);
    expect(st.range(b('k'), b('l')).count).to.equal(10);
  });

  it('restart rebuilds the index from the backend with the same results', () => {
    st.put(b('a'), b('1'));
    st.put(b('b'), b('1'));
    st.put(b('a'), b('2'));
    st.deleteRange(b('b'));
    st.put(b('b'), b('again'));
    st.compact(3);
    be.setConsistentIndex(9);
    const snapshot = JSON.stringify(st.range(b('\0'), b('\0')), (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    const rev = st.rev();
    const hash = st.hashByRev(0).hash;
    be.close();
    ({ be, st } = openStore(t.dir));
    expect(st.rev()).to.equal(rev);
    expect(st.compactRev()).to.equal(3);
    expect(be.consistentIndex()).to.equal(9);
    expect(JSON.stringify(st.range(b('\0'), b('\0')), (_k, v) => (typeof v === 'bigint' ? String(v) : v))).to.equal(snapshot);
    expect(st.hashByRev(0).hash).to.equal(hash);
    expect(st.range(b('b')).kvs[0]).to.deep.include({ version: 1, createRevision: 6 });
    st.put(b('a'), b('3'));
    expect(st.range(b('a')).kvs[0]).to.deep.include({ version: 3, createRevision: 2, modRevision: rev + 1 });
  });

  it('keeps the current revision when compaction removed the newest revisions', () => {
    st.put(b('a'), b('1')); // 2
    st.deleteRange(b('a')); // 3
    st.compact(3);
    be.close();
    ({ be, st } = openStore(t.dir));
    expect(st.rev()).to.equal(3);
    expect(st.put(b('a'), b('x')).rev).to.equal(4);
  });

  it('two stores given the same writes have the same hashes', () => {
    const t2 = tempDir();
    const { be: be2, st: st2 } = openStore(t2.dir);
    try {
      for (const x of [st, st2]) {
        for (let i = 0; i < 50; i++) x.put(b(`k${i % 7}`), b(`v${i}`));
        x.deleteRange(b('k3'));
        x.compact(20);
        x.put(b('z'), b('z'));
      }
      expect(st.hashByRev(0)).to.deep.equal(st2.hashByRev(0));
      expect(st.hashByRev(30)).to.deep.equal(st2.hashByRev(30));
      expect(st.hash()).to.deep.equal(st2.hash());
      st2.put(b('z'), b('different'));
      st.put(b('z'), b('other'));
      expect(st.hashByRev(0).hash).to.not.equal(st2.hashByRev(0).hash);
      // The hash at an earlier revision still agrees.
      expect(st.hashByRev(30).hash).to.equal(st2.hashByRev(30).hash);
    } finally {
      be2.close();
      t2.cleanup();
    }
  });

  it('hashByRev ignores revisions after the requested one', () => {
    for (let i = 0; i < 30; i++) st.put(b(`k${i % 5}`), b(`v${i}`));
    st.deleteRange(b('k2'));
    const h = st.hashByRev(20);
    expect(h.hashRev).to.equal(20);
    expect(h.currentRev).to.equal(32);
    for (let i = 0; i < 10; i++) st.put(b(`k${i}`), b('later'));
    expect(st.hashByRev(20).hash).to.equal(h.hash);
    expect(st.hashByRev(32).hash).to.equal(st.hashByRev(32).hash);
    expect(() => st.hashByRev(1000)).to.throw('mvcc: required revision is a future revision');
  });

  it('counts puts, deletes, ranges and multi-op txns', () => {
    st.put(b('a'), b('1'));
    st.range(b('a'));
    const tw = st.write();
    tw.put(b('b'), b('1'));
    tw.deleteRange(b('a'));
    tw.end();
    expect(st.stats).to.deep.include({ putTotal: 2, deleteTotal: 1, rangeTotal: 1, txnTotal: 1, keysTotal: 2 });
    expect(st.stats.dbTotalSize).to.be.greaterThan(0);
  });

  it('compare semantics of txns', () => {
    st.put(b('a'), b('1'));
    st.put(b('b'), b('2'));
    const rt = st.read();
    const cmp = (c: Parameters<typeof evaluateCompareOn>[1]) => evaluateCompareOn(rt, c);
    expect(cmp({ target: CompareTarget.VALUE, result: CompareResult.EQUAL, key: b('a'), value: b('1') })).to.equal(true);
    expect(cmp({ target: 'VALUE', result: 'GREATER', key: b('a'), value: b('0') })).to.equal(true);
    expect(cmp({ target: 'VALUE', result: 'EQUAL', key: b('missing'), value: b('') })).to.equal(false);
    expect(cmp({ target: 'VERSION', result: 'EQUAL', key: b('missing'), version: 0 })).to.equal(true);
    expect(cmp({ target: 'CREATE', result: 'EQUAL', key: b('missing'), createRevision: 0 })).to.equal(true);
    expect(cmp({ target: 'MOD', result: 'LESS', key: b('a'), modRevision: 3 })).to.equal(true);
    expect(cmp({ target: 'MOD', result: 'NOT_EQUAL', key: b('a'), modRevision: 2 })).to.equal(false);
    expect(cmp({ target: 'LEASE', result: 'EQUAL', key: b('a'), lease: 0n })).to.equal(true);
    // Over a range every key must match.
    expect(cmp({ target: 'VERSION', result: 'EQUAL', key: b('a'), rangeEnd: b('c'), version: 1 })).to.equal(true);
    expect(cmp({ target: 'MOD', result: 'GREATER', key: b('a'), rangeEnd: b('\0'), modRevision: 2 })).to.equal(false);
    expect(cmp({ target: 'CREATE', result: 'GREATER', key: b('x'), rangeEnd: b('z'), createRevision: 0 })).to.equal(false);
    rt.end();
    expect(evaluateCompare([], { target: 'VALUE', result: 'NOT_EQUAL', key: b('x'), value: b('1') })).to.equal(false);
  });
});

import { expect } from 'chai';
import fc from 'fast-check';
import { newIntervalTree, type Interval } from '../../../server/mvcc/adt/interval-tree.js';
import { BTreeMap } from '../../../server/mvcc/btree.js';
import { KeyIndex } from '../../../server/mvcc/key-index.js';

const key = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd', '\0', '\xff'), maxLength: 4 });
const interval: fc.Arbitrary<Interval> = fc
  .tuple(key, fc.option(key, { nil: null }))
  .map(([x, y]) => (y === null ? { begin: x, end: null } : x < y ? { begin: x, end: y } : { begin: y, end: x + '\0' }));

function overlaps(a: Interval, q: Interval): boolean {
  return (q.end === null || a.begin < q.end) && (a.end === null || q.begin < a.end);
}
const ivlStr = (i: Interval) => `${JSON.stringify(i.begin)}-${i.end === null ? 'inf' : JSON.stringify(i.end)}`;

describe('interval tree (against a naive model)', () => {
  it('insert/delete/find/stab/visit/intersects agree with a list', () => {
    type Op = { op: 'ins' | 'del'; ivl: Interval; v: number };
    const op: fc.Arbitrary<Op> = fc.record({ op: fc.constantFrom('ins' as const, 'del' as const), ivl: interval, v: fc.nat(100) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), fc.array(key, { maxLength: 10 }), fc.array(interval, { maxLength: 10 }), (ops, points, queries) => {
        const tree = newIntervalTree<number>();
        const model = new Map<string, { ivl: Interval; v: number }>();
        for (const o of ops) {
          if (o.op === 'ins') {
            tree.insert(o.ivl, o.v);
            model.set(ivlStr(o.ivl), { ivl: o.ivl, v: o.v });
          } else {
            expect(tree.delete(o.ivl)).to.equal(model.delete(ivlStr(o.ivl)));
          }
        }
        expect(tree.len()).to.equal(model.size);
        for (const m of model.values()) expect(tree.find(m.ivl)?.val).to.equal(m.v);
        const sorted = (xs: { ivl: Interval }[]) => xs.map((x) => ivlStr(x.ivl)).sort();
        for (const p of points) {
          const want = [...model.values()].filter((m) => m.ivl.begin <= p && (m.ivl.end === null || p < m.ivl.end));
          expect(sorted(tree.stab(p))).to.deep.equal(sorted(want));
        }
        for (const q of queries) {
          const want = [...model.values()].filter((m) => overlaps(m.ivl, q));
          const got: { ivl: Interval }[] = [];
          tree.visit(q, (iv) => void got.push(iv));
          expect(sorted(got)).to.deep.equal(sorted(want));
          expect(tree.intersects(q)).to.equal(want.length > 0);
        }
        expect(tree.all().map((x) => ivlStr(x.ivl))).to.deep.equal(
          [...model.values()]
            .sort((a, b) => (a.ivl.begin < b.ivl.begin ? -1 : a.ivl.begin > b.ivl.begin ? 1 : a.ivl.end === b.ivl.end ? 0 : a.ivl.end === null ? 1 : b.ivl.end === null ? -1 : a.ivl.end < b.ivl.end ? -1 : 1))
            .map((x) => ivlStr(x.ivl)),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('stays shallow with many sequential inserts', () => {
    const tree = newIntervalTree<number>();
    for (let i = 0; i < 10000; i++) tree.insert({ begin: String(i).padStart(6, '0'), end: String(i + 5).padStart(6, '0') }, i);
    expect(tree.height()).to.be.lessThan(60);
    expect(tree.stab('000100').length).to.equal(5);
  });
});

describe('ordered map (B+tree, against a sorted model)', () => {
  it('set/delete/get/forRange agree with a Map', () => {
    const op = fc.record({ del: fc.boolean(), k: fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd', 'e'), maxLength: 5 }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 600 }), key, fc.option(key, { nil: undefined }), (ops, start, end) => {
        const t = new BTreeMap<string>();
        const m = new Map<string, string>();
        for (const o of ops) {
          if (o.del) expect(t.delete(o.k)).to.equal(m.delete(o.k));
          else {
            t.set(o.k, o.k + '!');
            m.set(o.k, o.k + '!');
          }
        }
        expect(t.size).to.equal(m.size);
        for (const k of m.keys()) expect(t.get(k)).to.equal(m.get(k));
        const got: string[] = [];
        t.forRange(start, end, (k) => void got.push(k));
        const want = [...m.keys()].filter((k) => k >= start && (end === undefined || k < end)).sort();
        expect(got).to.deep.equal(want);
      }),
      { numRuns: 150 },
    );
  });

  it('handles 100k keys with deletes of most of them', () => {
    const t = new BTreeMap<number>();
    for (let i = 0; i < 100000; i++) t.set(String(i * 7919 % 100000).padStart(6, '0'), i);
    for (let i = 0; i < 100000; i += 3) t.delete(String(i).padStart(6, '0'));
    let n = 0;
    let prev = '';
    t.forEach((k) => {
      expect(k > prev).to.equal(true);
      prev = k;
      n++;
    });
    expect(n).to.equal(t.size);
    expect(t.size).to.equal(100000 - 33334);
  });
});

describe('key index', () => {
  it('generations, get at revisions, since, compact and keep like the reference', () => {
    const ki = new KeyIndex('foo');
    ki.put(2, 0);
    ki.put(4, 0);
    ki.tombstone(6, 0);
    ki.put(8, 0);
    ki.put(10, 0);
    ki.tombstone(12, 0);
    ki.put(14, 0);
    ki.put(14, 1);
    ki.put(16, 0);
    expect(ki.get(1)).to.equal(undefined);
    expect(ki.get(5)).to.deep.equal({ modified: { main: 4, sub: 0 }, created: { main: 2, sub: 0 }, ver: 2 });
    expect(ki.get(6)).to.equal(undefined);
    expect(ki.get(13)).to.equal(undefined);
    expect(ki.get(15)).to.deep.equal({ modified: { main: 14, sub: 1 }, created: { main: 14, sub: 0 }, ver: 2 });
    expect(ki.since(9).map((r) => `${r.main}.${r.sub}`)).to.deep.equal(['10.0', '12.0', '14.1', '16.0']);
    const keep = new Set<string>();
    ki.keep(7, keep);
    expect([...keep]).to.deep.equal([]);
    const avail = new Set<string>();
    ki.compact(7, avail);
    expect([...avail]).to.deep.equal([]);
    expect(ki.generations.length).to.equal(2);
    const a2 = new Set<string>();
    ki.compact(11, a2);
    expect([...a2]).to.deep.equal(['10_0']);
    expect(ki.get(11)!.modified).to.deep.equal({ main: 10, sub: 0 });
    const a3 = new Set<string>();
    ki.compact(17, a3);
    expect([...a3]).to.deep.equal(['16_0']);
    expect(ki.generations).to.have.length(1);
  });
});

// Property tests against simple in-memory models: the backend's buffered reads, and the mvcc store's
// revisions, historical reads and compaction across commits and reopens.
import { expect } from 'chai';
import fc from 'fast-check';
import type { Backend } from '../../../server/storage/backend.js';
import { MvccError } from '../../../server/mvcc/errors.js';
import { b, backendIn, openStore, s, tempDir } from './helpers.js';

const keyArb = fc.constantFrom('a', 'b', 'ba', 'bb', 'c', 'd', 'e\xff');

describe('backend reads against a model', () => {
  it('range/get merge buffered and committed writes correctly', () => {
    const t = tempDir();
    try {
      type Op = { kind: 'put' | 'del' | 'commit' | 'reopen'; k: string; v: number };
      const opArb: fc.Arbitrary<Op> = fc.record({
        kind: fc.constantFrom('put' as const, 'put' as const, 'del' as const, 'commit' as const, 'reopen' as const),
        k: keyArb,
        v: fc.nat(9),
      });
      let run = 0;
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 40 }), keyArb, keyArb, fc.nat(4), (ops, x, y, limit) => {
          const dir = `${t.dir}/run${run++}`;
          let be: Backend = backendIn(dir, { batchIntervalMs: 0 });
          const model = new Map<string, string>();
          try {
            for (const o of ops) {
              if (o.kind === 'put') {
                be.batchTx().put('cluster', b(o.k), b(String(o.v)));
                model.set(o.k, String(o.v));
              } else if (o.kind === 'del') {
                be.batchTx().delete('cluster', b(o.k));
                model.delete(o.k);
              } else if (o.kind === 'commit') be.forceCommit();
              else {
                be.close();
                be = backendIn(dir, { batchIntervalMs: 0 });
              }
            }
            const [lo, hi] = x <= y ? [x, y] : [y, x];
            const want = [...model.entries()]
              .filter(([k]) => k >= lo && k < hi)
              .sort(([a], [c]) => (a < c ? -1 : 1))
              .map(([k, v]) => `${k}=${v}`);
            const got = be.readTx().range('cluster', b(lo), b(hi), limit).map((e) => `${s(e.key)}=${s(e.value)}`);
            expect(got).to.deep.equal(limit > 0 ? want.slice(0, limit) : want);
            for (const k of ['a', 'b', 'c', 'zz']) {
              const g = be.readTx().get('cluster', b(k));
              expect(g === undefined ? undefined : s(g)).to.equal(model.get(k));
            }
          } finally {
            be.close();
          }
        }),
        { numRuns: 40 },
      );
    } finally {
      t.cleanup();
    }
  });
});

type Kv = { value: string; create: number; mod: number; version: number };

describe('mvcc store against a model', () => {
  it('historical ranges, versions and compaction agree with a full-history model', () => {
    const t = tempDir();
    try {
      type Op =
        | { kind: 'put'; k: string; v: number }
        | { kind: 'del'; k: string; end: string | null }
        | { kind: 'txn'; ks: string[] }
        | { kind: 'compact'; back: number }
        | { kind: 'reopen' };
      const opArb: fc.Arbitrary<Op> = fc.oneof(
        { weight: 5, arbitrary: fc.record({ kind: fc.constant('put' as const), k: keyArb, v: fc.nat(9) }) },
        { weight: 2, arbitrary: fc.record({ kind: fc.constant('del' as const), k: keyArb, end: fc.option(keyArb, { nil: null }) }) },
        { weight: 2, arbitrary: fc.record({ kind: fc.constant('txn' as const), ks: fc.array(keyArb, { minLength: 1, maxLength: 4 }) }) },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), back: fc.nat(5) }) },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
      );
      let run = 0;
      fc.assert(
        fc.property(fc.array(opArb, { maxLength: 50 }), (ops) => {
          const dir = `${t.dir}/run${run++}`;
          let { be, st } = openStore(dir, { batchIntervalMs: 0, batchLimit: 7 });
          // history[r] = the state at revision r
          const history: Map<string, Kv>[] = [new Map(), new Map()];
          let compacted = -1;
          const cur = () => history[history.length - 1];
          try {
            for (const o of ops) {
              if (o.kind === 'put' || o.kind === 'txn') {
                const ks = o.kind === 'put' ? [o.k] : o.ks;
                const next = new Map(cur());
                const rev = history.length;
                const tw = st.write();
                ks.forEach((k, i) => {
                  const v = `${i}:${o.kind === 'put' ? o.v : rev}`;
                  tw.put(b(k), b(v));
                  const old = next.get(k);
                  next.set(k, { value: v, create: old ? old.create : rev, mod: rev, version: (old?.version ?? 0) + 1 });
                });
                tw.end();
                history.push(next);
              } else if (o.kind === 'del') {
                let end = o.end;
                if (end !== null && end <= o.k) end = null;
                const doomed = [...cur().keys()].filter((k) => (end === null ? k === o.k : k >= o.k && k < end));
                st.deleteRange(b(o.k), end === null ? undefined : b(end));
                if (doomed.length > 0) {
                  const next = new Map(cur());
                  for (const k of doomed) next.delete(k);
                  history.push(next);
                }
              } else if (o.kind === 'compact') {
                const target = history.length - 1 - o.back;
                if (target <= compacted || target < 1) {
                  if (target >= 1) expect(() => st.compact(target)).to.throw(MvccError);
                  continue;
                }
                st.compact(target);
                compacted = target;
              } else {
                be.close();
                ({ be, st } = openStore(dir, { batchIntervalMs: 0, batchLimit: 7 }));
              }
              expect(st.rev()).to.equal(history.length - 1);
            }
            for (let rev = 1; rev < history.length; rev++) {
              if (rev < compacted) {
                expect(() => st.range(b('a'), b('\0'), { rev })).to.throw('mvcc: required revision has been compacted');
                continue;
              }
              const got = st.range(b('\0'), b('\0'), { rev }).kvs.map(
                (kv) => `${s(kv.key)}=${s(kv.value)}/${kv.createRevision}/${kv.modRevision}/${kv.version}`,
              );
              const want = [...history[rev].entries()]
                .sort(([a], [c]) => (a < c ? -1 : 1))
                .map(([k, kv]) => `${k}=${kv.value}/${kv.create}/${kv.mod}/${kv.version}`);
              expect(got, `at revision ${rev}`).to.deep.equal(want);
            }
          } finally {
            be.close();
          }
        }),
        { numRuns: 60 },
      );
    } finally {
      t.cleanup();
    }
  });
});

import { expect } from 'chai';
import fc from 'fast-check';
import type { KvInput, KvOutput, Operation, Outcome } from '../../../harness/chaos/history.js';
import { checkHistory } from '../../../harness/chaos/linearizability.js';

let nextId = 0;
/** A hand-made operation: [call, ret] in ms. */
function op(client: number, call: number, ret: number, input: KvInput, output?: KvOutput, outcome: Outcome = 'ok'): Operation {
  return { id: nextId++, client, call, ret, input, output: outcome === 'ok' ? output : undefined, outcome };
}
const put = (c: number, a: number, b: number, key: string, value: string, outcome: Outcome = 'ok') => op(c, a, b, { kind: 'put', key, value }, { kind: 'put' }, outcome);
const get = (c: number, a: number, b: number, key: string, value: string | null) => op(c, a, b, { kind: 'get', key }, { kind: 'get', value });
const del = (c: number, a: number, b: number, key: string, deleted: number) => op(c, a, b, { kind: 'delete', key }, { kind: 'delete', deleted });
const cas = (c: number, a: number, b: number, key: string, expected: string | null, value: string, succeeded: boolean) =>
  op(c, a, b, { kind: 'cas', key, expected, value }, { kind: 'cas', succeeded });

describe('chaos: linearizability checker (hand-made histories)', () => {
  it('accepts a sequential history', () => {
    const r = checkHistory([put(0, 0, 1, 'x', 'a'), get(1, 2, 3, 'x', 'a'), del(0, 4, 5, 'x', 1), get(1, 6, 7, 'x', null), del(0, 8, 9, 'x', 0)]);
    expect(r.ok, r.report).to.equal(true);
  });

  it('accepts a read concurrent with a write returning either value', () => {
    for (const seen of ['a', 'b']) {
      const r = checkHistory([put(0, 0, 1, 'x', 'a'), put(0, 2, 10, 'x', 'b'), get(1, 3, 4, 'x', seen)]);
      expect(r.ok, r.report).to.equal(true);
    }
  });

  it('accepts reads that observe a write in a real-time-consistent order', () => {
    // put b is slow; one reader sees it early, a later reader must see it too (and does)
    const r = checkHistory([put(0, 0, 1, 'x', 'a'), put(0, 2, 20, 'x', 'b'), get(1, 3, 5, 'x', 'b'), get(2, 6, 8, 'x', 'b')]);
    expect(r.ok, r.report).to.equal(true);
  });

  it('detects a stale read', () => {
    const r = checkHistory([put(0, 0, 1, 'x', 'a'), put(0, 2, 3, 'x', 'b'), get(1, 4, 5, 'x', 'a')]);
    expect(r.ok).to.equal(false);
    expect(r.violations[0].key).to.equal('x');
    expect(r.report).to.contain('NOT linearizable').and.contain('get("x") -> "a"');
  });

  it('detects a new-then-old read inversion between two readers', () => {
    const r = checkHistory([put(0, 0, 1, 'x', 'a'), put(0, 2, 20, 'x', 'b'), get(1, 3, 5, 'x', 'b'), get(2, 6, 8, 'x', 'a')]);
    expect(r.ok).to.equal(false);
  });

  it('detects a lost acknowledged write', () => {
    const r = checkHistory([put(0, 0, 1, 'x', 'a'), get(1, 5, 6, 'x', null)]);
    expect(r.ok).to.equal(false);
    expect(r.report).to.contain('get("x") -> absent');
  });

  it('detects a read of an uncommitted (failed) write and of a value nobody wrote', () => {
    expect(checkHistory([put(0, 0, 1, 'x', 'a', 'failed'), get(1, 2, 3, 'x', 'a')]).ok).to.equal(false);
    expect(checkHistory([put(0, 0, 1, 'x', 'a'), get(1, 2, 3, 'x', 'zzz')]).ok).to.equal(false);
  });

  it('lets an unknown-outcome write take effect late, or never', () => {
    expect(checkHistory([put(0, 0, 1, 'x', 'a', 'unknown'), get(1, 50, 51, 'x', 'a')]).ok).to.equal(true);
    expect(checkHistory([put(0, 0, 1, 'x', 'a', 'unknown'), get(1, 50, 51, 'x', null)]).ok).to.equal(true);
    // but not before it was invoked
    expect(checkHistory([get(1, 0, 1, 'x', 'a'), put(0, 5, 6, 'x', 'a', 'unknown')]).ok).to.equal(false);
  });

  it('checks compare-and-set: two winners from the same expectation are impossible', () => {
    const ok = checkHistory([put(0, 0, 1, 'x', 'a'), cas(1, 2, 5, 'x', 'a', 'b', true), cas(2, 2, 5, 'x', 'a', 'c', false), get(0, 6, 7, 'x', 'b')]);
    expect(ok.ok, ok.report).to.equal(true);
    const bad = checkHistory([put(0, 0, 1, 'x', 'a'), cas(1, 2, 5, 'x', 'a', 'b', true), cas(2, 2, 5, 'x', 'a', 'c', true)]);
    expect(bad.ok).to.equal(false);
    const absent = checkHistory([cas(1, 0, 1, 'x', null, 'n', true), cas(2, 2, 3, 'x', null, 'm', false), get(0, 4, 5, 'x', 'n')]);
    expect(absent.ok, absent.report).to.equal(true);
  });

  it('checks delete counts', () => {
    expect(checkHistory([del(0, 0, 1, 'x', 1)]).ok).to.equal(false);
    expect(checkHistory([put(0, 0, 1, 'x', 'a'), del(0, 2, 3, 'x', 0)]).ok).to.equal(false);
  });

  it('keys are independent', () => {
    const r = checkHistory([put(0, 0, 10, 'x', 'a'), put(1, 0, 10, 'y', 'b'), get(2, 11, 12, 'x', 'a'), get(2, 11, 12, 'y', 'b')]);
    expect(r.ok).to.equal(true);
    expect(r.keys.map((k) => k.key)).to.deep.equal(['x', 'y']);
  });

  it('narrows a violation to a small window', () => {
    const ops: Operation[] = [];
    let t = 0;
    for (let i = 0; i < 200; i++) {
      ops.push(put(i % 3, t, t + 3, 'x', `v${i}`));
      ops.push(get((i + 1) % 3, t + 1, t + 4, 'x', i % 2 ? `v${i}` : `v${i - 1 < 0 ? 0 : i - 1}`));
      t += 5;
    }
    ops.push(get(4, t + 10, t + 11, 'x', 'v150')); // stale by 49 writes
    for (let i = 0; i < 20; i++) ops.push(get(5, t + 20 + i, t + 20.5 + i, 'x', 'v199'));
    const r = checkHistory(ops);
    expect(r.ok).to.equal(false);
    const w = r.violations[0].window!;
    expect(w.length).to.be.lessThan(6);
    expect(w.map((o) => o.id)).to.include(ops[400].id);
  });
});

// A sequential execution with random overlapping timings: every op gets a linearization point p in
// [call, ret]; answers come from the model applied in the order of p.
const opArb = fc.record({
  key: fc.constantFrom('a', 'b', 'c'),
  kind: fc.constantFrom('put', 'get', 'delete', 'cas'),
  client: fc.integer({ min: 0, max: 4 }),
  before: fc.integer({ min: 0, max: 30 }),
  after: fc.integer({ min: 0, max: 30 }),
  gap: fc.integer({ min: 0, max: 5 }),
  expectWritten: fc.boolean(),
  fate: fc.constantFrom('ok', 'ok', 'ok', 'ok', 'failed', 'unknown-applied', 'unknown-lost'),
});

type Spec = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

function simulate(specs: Spec[]): Operation[] {
  const state = new Map<string, string | null>();
  const written: string[] = [];
  const ops: Operation[] = [];
  let p = 100;
  specs.forEach((s, i) => {
    p += s.gap + 0.5;
    const cur = state.get(s.key) ?? null;
    const value = `v${i}`;
    let input: KvInput;
    let output: KvOutput;
    let next = cur;
    switch (s.kind) {
      case 'put':
        input = { kind: 'put', key: s.key, value };
        output = { kind: 'put' };
        next = value;
        break;
      case 'get':
        input = { kind: 'get', key: s.key };
        output = { kind: 'get', value: cur };
        break;
      case 'delete':
        input = { kind: 'delete', key: s.key };
        output = { kind: 'delete', deleted: cur === null ? 0 : 1 };
        next = null;
        break;
      default: {
        const expected = s.expectWritten ? cur : (written[i % Math.max(1, written.length)] ?? null);
        input = { kind: 'cas', key: s.key, expected, value };
        output = { kind: 'cas', succeeded: expected === cur };
        if (expected === cur) next = value;
      }
    }
    const applied = s.fate === 'ok' || s.fate === 'unknown-applied';
    if (applied) {
      state.set(s.key, next);
      if (input.kind !== 'get' && input.kind !== 'delete') written.push(value);
    }
    const outcome: Outcome = s.fate === 'ok' ? 'ok' : s.fate === 'failed' ? 'failed' : 'unknown';
    ops.push({ id: i, client: s.client, input, output: outcome === 'ok' ? output : undefined, outcome, call: p - s.before, ret: p + s.after });
  });
  return ops;
}

describe('chaos: linearizability checker (property)', () => {
  it('accepts every history generated from the sequential model with overlapping timings', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 60 }), (specs) => {
        const r = checkHistory(simulate(specs), { budgetMs: 20000 });
        return r.ok || (console.error(r.report), false);
      }),
      { numRuns: 300, seed: 4242 },
    );
  });

  it('rejects the same histories when one read returns a value never written', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), fc.nat(), (specs, pick) => {
        const ops = simulate(specs);
        const reads = ops.filter((o) => o.input.kind === 'get' && o.outcome === 'ok');
        fc.pre(reads.length > 0);
        const r = reads[pick % reads.length];
        r.output = { kind: 'get', value: 'never-written' };
        return !checkHistory(ops, { budgetMs: 20000 }).ok;
      }),
      { numRuns: 200, seed: 777 },
    );
  });
});

describe('chaos: linearizability checker (report)', () => {
  it('names the failed write whose value was read', () => {
    const f = put(2, 0, 5, 'x', 'ghost', 'failed');
    f.error = 'etcdserver: server stopped';
    const r = checkHistory([put(0, 0, 1, 'x', 'a'), f, get(1, 10, 11, 'x', 'ghost')]);
    expect(r.ok).to.equal(false);
    expect(r.report).to.contain('answered as FAILED: etcdserver: server stopped');
  });
});

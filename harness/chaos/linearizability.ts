// A Wing–Gong linearizability checker with Lowe's memoisation (the algorithm Porcupine uses), specialised
// to the per-key register model of kv-model.ts. The history is split by key (linearizability is local:
// the whole history is linearizable iff every key's sub-history is), each key is searched depth-first
// for an order that respects real time and the model, and a failing key is narrowed to the smallest
// window of time that is non-linearizable on its own, which is what the report prints.
//
// Outcomes: 'failed' operations are dropped (they did not happen); 'unknown' reads are dropped (no
// effect); 'unknown' writes stay, with no completion time and any answer allowed: they may take effect
// at any point after their invocation, or never (then they sit at the end of the order, where their
// effect is unobservable).

import { describeOp, type Operation } from './history.js';
import { ANY, describeState, step, stateKey, type ModelOp, type RegisterState } from './kv-model.js';

export interface CheckOptions {
  /** Initial value per key (absent keys: null, i.e. the key does not exist). */
  initial?: ReadonlyMap<string, string | null>;
  /** Give up on a key after this long; its result is then 'timeout'. Default 60 s. */
  budgetMs?: number;
}

/** One key's verdict. */
export interface KeyVerdict {
  key: string;
  result: 'ok' | 'violation' | 'timeout';
  operations: number;
  /** For a violation: the smallest non-linearizable window, in invocation order. */
  window?: Operation[];
  /** For a violation: a readable report of the window. */
  report?: string;
}

/** The verdict on a whole history. */
export interface CheckResult {
  ok: boolean;
  keys: KeyVerdict[];
  /** Keys that are not linearizable. */
  violations: KeyVerdict[];
  /** Keys the checker gave up on (budget exhausted): neither proven nor refuted. */
  undecided: KeyVerdict[];
  /** All violation reports joined. */
  report: string;
}

/** Checks a whole history (any number of keys). */
export function checkHistory(history: readonly Operation[], opts: CheckOptions = {}): CheckResult {
  const byKey = new Map<string, Operation[]>();
  const failedWrites = new Map<string, Operation>();
  for (const op of history) {
    if (op.outcome === 'failed' && 'value' in op.input) failedWrites.set(`${op.input.key}\u0000${op.input.value}`, op);
    if (op.outcome === 'failed') continue;
    if (op.outcome === 'unknown' && op.input.kind === 'get') continue;
    const list = byKey.get(op.input.key) ?? [];
    list.push(op);
    byKey.set(op.input.key, list);
  }
  const keys: KeyVerdict[] = [];
  for (const [key, ops] of [...byKey].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const deadline = Date.now() + (opts.budgetMs ?? 60000);
    const initial = opts.initial?.get(key) ?? null;
    const verdict = checkKey(key, ops, initial, deadline);
    // Point at the usual culprit: a value read that a write reported as failed had written.
    for (const o of verdict.window ?? []) {
      if (o.output?.kind !== 'get' || o.output.value === null) continue;
      const f = failedWrites.get(`${key}\u0000${o.output.value}`);
      if (f) verdict.report += `\n  note: #${o.id} read ${JSON.stringify(o.output.value)}, written by #${f.id} (client ${f.client}${f.member ? `@${f.member}` : ''}, +${f.call.toFixed(1)}ms), which was answered as FAILED: ${f.error ?? '?'}`;
    }
    keys.push(verdict);
  }
  const violations = keys.filter((k) => k.result === 'violation');
  const undecided = keys.filter((k) => k.result === 'timeout');
  return {
    ok: violations.length === 0 && undecided.length === 0,
    keys,
    violations,
    undecided,
    report: [
      ...violations.map((v) => v.report ?? ''),
      ...undecided.map((u) => `key ${JSON.stringify(u.key)}: checker gave up (budget exhausted) on ${u.operations} operations`),
    ].join('\n\n'),
  };
}

interface Item {
  op: Operation;
  model: ModelOp;
  call: number;
  ret: number;
}

/** Checks one key's operations; narrows a failure to its smallest window. */
function checkKey(key: string, ops: Operation[], initial: string | null, deadline: number): KeyVerdict {
  const sorted = [...ops].sort((a, b) => a.call - b.call || a.id - b.id);
  const full = search(sorted.map(toItem), [initial], deadline);
  if (full.result === 'ok') return { key, result: 'ok', operations: ops.length };
  if (full.result === 'timeout') return { key, result: 'timeout', operations: ops.length };

  // Smallest failing prefix: cut at a completion time t; operations invoked later are left out and
  // those still running at t lose their answers. Sound and monotone: an order for the full history,
  // restricted to the prefix, is an order for the prefix (every op placed before a known answer at or
  // before t was invoked before t).
  const cuts = [...new Set(sorted.filter((o) => o.outcome === 'ok').map((o) => o.ret))].sort((a, b) => a - b);
  const prefixFails = (t: number) => search(prefixItems(sorted, t), [initial], deadline).result === 'violation';
  let lo = 0;
  let hi = cuts.length - 1; // the full history fails, so the last cut (≥ every known completion) fails
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (prefixFails(cuts[mid])) hi = mid;
    else lo = mid + 1;
  }
  const t = cuts[hi] ?? Infinity;
  const prefix = sorted.filter((o) => o.call <= t);

  // Latest start s: operations finished before s are left out, those running across s become
  // optional (they may already have taken effect), and the initial value is unknown.
  const starts = [...new Set(prefix.flatMap((o) => [o.call, o.outcome === 'ok' ? o.ret : o.call]))].filter((s) => s <= t).sort((a, b) => a - b);
  const windowFails = (s: number) => search(windowItems(prefix, s, t), [ANY], deadline).result === 'violation';
  let a = 0;
  let b = starts.length - 1;
  let best = -Infinity; // -Infinity: the whole prefix from the known initial state
  while (a <= b) {
    const mid = (a + b) >> 1;
    if (windowFails(starts[mid])) {
      best = starts[mid];
      a = mid + 1;
    } else {
      b = mid - 1;
    }
  }
  const items = best === -Infinity ? prefixItems(sorted, t) : windowItems(prefix, best, t);
  const trace = search(items, best === -Infinity ? [initial] : [ANY], deadline);
  const window = items.map((i) => i.op);
  return { key, result: 'violation', operations: ops.length, window, report: renderReport(key, items, best, initial, trace) };
}

function toItem(op: Operation): Item {
  const known = op.outcome === 'ok';
  return { op, model: { input: op.input, output: known ? op.output : undefined }, call: op.call, ret: known ? op.ret : Infinity };
}

function prefixItems(sorted: Operation[], t: number): Item[] {
  return sorted
    .filter((o) => o.call <= t)
    .map((o) => {
      const it = toItem(o);
      return it.ret <= t ? it : { ...it, model: { input: o.input }, ret: Infinity };
    });
}

function windowItems(prefix: Operation[], s: number, t: number): Item[] {
  return prefixItems(prefix, t)
    .filter((it) => it.ret > s || it.call >= s)
    .map((it) => (it.call < s ? { ...it, model: { ...it.model, optional: true } } : it));
}

interface SearchResult {
  result: 'ok' | 'violation' | 'timeout';
  /** For a violation: the longest order found that the model accepts, and the state after it. */
  longest?: { items: Item[]; state: RegisterState };
}

interface Entry {
  isCall: boolean;
  index: number;
  time: number;
  match?: Entry;
  prev?: Entry;
  next?: Entry;
}

/** The depth-first search over a doubly linked list of call/return events (Porcupine's checkSingle). */
function search(items: Item[], initial: RegisterState, deadline: number): SearchResult {
  if (items.length === 0) return { result: 'ok' };
  const events: Entry[] = [];
  items.forEach((it, index) => {
    const call: Entry = { isCall: true, index, time: it.call };
    const ret: Entry = { isCall: false, index, time: it.ret };
    call.match = ret;
    events.push(call, ret);
  });
  // Calls before returns at equal times: touching intervals count as concurrent (the permissive choice).
  events.sort((x, y) => x.time - y.time || (x.isCall === y.isCall ? x.index - y.index : x.isCall ? -1 : 1));
  const head: Entry = { isCall: false, index: -1, time: -Infinity };
  let prev = head;
  for (const e of events) {
    prev.next = e;
    e.prev = prev;
    prev = e;
  }
  const lift = (e: Entry) => {
    e.prev!.next = e.next;
    if (e.next) e.next.prev = e.prev;
    const m = e.match!;
    m.prev!.next = m.next;
    if (m.next) m.next.prev = m.prev;
  };
  const unlift = (e: Entry) => {
    const m = e.match!;
    m.prev!.next = m;
    if (m.next) m.next.prev = m;
    e.prev!.next = e;
    if (e.next) e.next.prev = e;
  };

  const words = new Uint32Array(Math.ceil(items.length / 32));
  const cache = new Set<string>();
  const calls: Array<{ entry: Entry; state: RegisterState }> = [];
  let state = initial;
  let longest: Item[] = [];
  let longestState = initial;
  let entry = head.next;
  let steps = 0;
  while (head.next) {
    if ((++steps & 0xfff) === 0 && Date.now() > deadline) return { result: 'timeout' };
    // (The list always ends with a return event, so `entry` runs out only after one: treat it alike.)
    if (entry?.isCall) {
      const next = step(state, items[entry.index].model);
      if (next) {
        words[entry.index >> 5] |= 1 << (entry.index & 31);
        const key = `${words.join(',')}|${stateKey(next)}`;
        if (!cache.has(key)) {
          cache.add(key);
          calls.push({ entry, state });
          state = next;
          if (calls.length > longest.length) {
            longest = calls.map((c) => items[c.entry.index]);
            longestState = next;
          }
          lift(entry);
          entry = head.next;
          continue;
        }
        words[entry.index >> 5] &= ~(1 << (entry.index & 31));
      }
      entry = entry.next;
    } else {
      const top = calls.pop();
      if (!top) return { result: 'violation', longest: { items: longest, state: longestState } };
      state = top.state;
      words[top.entry.index >> 5] &= ~(1 << (top.entry.index & 31));
      unlift(top.entry);
      entry = top.entry.next;
    }
  }
  return { result: 'ok' };
}

function renderReport(key: string, items: Item[], start: number, initial: string | null, trace: SearchResult): string {
  const fmt = (ms: number) => (Number.isFinite(ms) ? `+${ms.toFixed(1)}ms` : 'never');
  const lines: string[] = [];
  const from = start === -Infinity ? `the start (value ${initial === null ? 'absent' : JSON.stringify(initial)})` : `${fmt(start)} (value unknown)`;
  lines.push(`key ${JSON.stringify(key)}: NOT linearizable. Smallest failing window: ${items.length} operation(s), from ${from}:`);
  for (const it of items) {
    const mark = it.model.optional ? '~' : ' ';
    const span = `${fmt(it.op.call)} .. ${it.op.outcome === 'ok' ? fmt(it.op.ret) : 'open'}`;
    lines.push(`  ${mark} #${it.op.id} client ${it.op.client}${it.op.member ? `@${it.op.member}` : ''}  ${span.padEnd(26)} ${describeOp(it.op)}`);
  }
  if (items.some((it) => it.model.optional)) lines.push('  (~ = running when the window began: may already have taken effect)');
  const l = trace.longest;
  if (l) {
    const order = l.items.map((it) => `#${it.op.id}`).join(' -> ') || '(nothing)';
    const placed = new Set(l.items.map((it) => it.op.id));
    const left = items.filter((it) => !placed.has(it.op.id)).map((it) => `#${it.op.id}`);
    lines.push(`  longest valid order: ${order}; value then: ${describeState(l.state)}; none of ${left.join(', ')} can go next.`);
  }
  return lines.join('\n');
}

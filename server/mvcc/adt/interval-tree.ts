// An interval tree over half-open byte-string intervals [begin, end) (latin-1 strings; end null = no upper
// bound): the watcher index for ranged watches. A treap (deterministic priorities) ordered by (begin, end)
// and augmented with each subtree's largest end, so stabbing and overlap queries skip whole subtrees.
// The implementation is private; callers get the IntervalTree interface from newIntervalTree().

/** [begin, end); end null means unbounded above. */
export interface Interval {
  begin: string;
  end: string | null;
}

export interface IntervalValue<V> {
  ivl: Interval;
  val: V;
}

/** An ordered set of intervals with a value each. */
export interface IntervalTree<V> {
  /** Adds ivl with val, replacing the value if the same interval is present. */
  insert(ivl: Interval, val: V): void;
  /** Removes ivl; returns whether it was present. */
  delete(ivl: Interval): boolean;
  /** The entry with exactly this interval. */
  find(ivl: Interval): IntervalValue<V> | undefined;
  /** Every entry whose interval contains point. */
  stab(point: string): IntervalValue<V>[];
  /** Whether any interval overlaps ivl. */
  intersects(ivl: Interval): boolean;
  /** Visits the intervals overlapping ivl in (begin, end) order; fn returning false stops. */
  visit(ivl: Interval, fn: (iv: IntervalValue<V>) => boolean | void): void;
  /** Every entry in (begin, end) order. */
  all(): IntervalValue<V>[];
  len(): number;
  height(): number;
}

interface Node<V> {
  ivl: Interval;
  val: V;
  prio: number;
  left: Node<V> | null;
  right: Node<V> | null;
  maxEnd: string | null;
}

/** Compares ends, null being +infinity. */
function cmpEnd(a: string | null, b: string | null): number {
  if (a === null) return b === null ? 0 : 1;
  if (b === null) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpIvl(a: Interval, b: Interval): number {
  if (a.begin !== b.begin) return a.begin < b.begin ? -1 : 1;
  return cmpEnd(a.end, b.end);
}

function update<V>(n: Node<V>): void {
  let m = n.ivl.end;
  if (n.left && cmpEnd(n.left.maxEnd, m) > 0) m = n.left.maxEnd;
  if (n.right && cmpEnd(n.right.maxEnd, m) > 0) m = n.right.maxEnd;
  n.maxEnd = m;
}

type Side = 'left' | 'right';
const OTHER = { left: 'right', right: 'left' } as const;

/** The child of `n` on `side` takes its place; `n` becomes that child's child on the other side. */
function rotateUp<V>(n: Node<V>, side: Side): Node<V> {
  const c = n[side]!;
  n[side] = c[OTHER[side]];
  c[OTHER[side]] = n;
  update(n);
  update(c);
  return c;
}

class TreapIntervalTree<V> implements IntervalTree<V> {
  private root: Node<V> | null = null;
  private count = 0;
  private seed = 0x9e3779b9;

  private nextPrio(): number {
    // xorshift32: deterministic, so the tree's shape depends only on the operations.
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    return this.seed;
  }

  insert(ivl: Interval, val: V): void {
    const copy = { begin: ivl.begin, end: ivl.end };
    this.root = this.ins(this.root, copy, val);
  }

  private ins(n: Node<V> | null, ivl: Interval, val: V): Node<V> {
    if (!n) {
      this.count++;
      return { ivl, val, prio: this.nextPrio(), left: null, right: null, maxEnd: ivl.end };
    }
    const c = cmpIvl(ivl, n.ivl);
    if (c === 0) {
      n.val = val;
      return n;
    }
    const side: Side = c < 0 ? 'left' : 'right';
    const child = this.ins(n[side], ivl, val);
    n[side] = child;
    if (child.prio > n.prio) return rotateUp(n, side);
    update(n);
    return n;
  }

  delete(ivl: Interval): boolean {
    const before = this.count;
    this.root = this.del(this.root, ivl);
    return this.count < before;
  }

  private del(n: Node<V> | null, ivl: Interval): Node<V> | null {
    if (!n) return null;
    const c = cmpIvl(ivl, n.ivl);
    if (c < 0) n.left = this.del(n.left, ivl);
    else if (c > 0) n.right = this.del(n.right, ivl);
    else {
      if (!n.left || !n.right) {
        this.count--;
        return n.left ?? n.right;
      }
      // Rotate the node down towards the child with the higher priority, then delete it there.
      const up: Side = n.left.prio > n.right.prio ? 'left' : 'right';
      const r = rotateUp(n, up);
      r[OTHER[up]] = this.del(r[OTHER[up]], ivl);
      update(r);
      return r;
    }
    update(n);
    return n;
  }

  find(ivl: Interval): IntervalValue<V> | undefined {
    let n = this.root;
    while (n) {
      const c = cmpIvl(ivl, n.ivl);
      if (c === 0) return { ivl: n.ivl, val: n.val };
      n = c < 0 ? n.left : n.right;
    }
    return undefined;
  }

  visit(ivl: Interval, fn: (iv: IntervalValue<V>) => boolean | void): void {
    this.walk(this.root, ivl, fn);
  }

  /** In-order walk over nodes overlapping ivl; returns false when fn asked to stop. */
  private walk(n: Node<V> | null, ivl: Interval, fn: (iv: IntervalValue<V>) => boolean | void): boolean {
    if (!n) return true;
    // No interval below ends after ivl.begin: nothing here overlaps.
    if (cmpEnd(n.maxEnd, ivl.begin) <= 0) return true;
    if (!this.walk(n.left, ivl, fn)) return false;
    const beginsBeforeEnd = ivl.end === null || n.ivl.begin < ivl.end;
    if (!beginsBeforeEnd) return true; // this node and everything to its right begin at or after ivl.end
    if (cmpEnd(n.ivl.end, ivl.begin) > 0) {
      if (fn({ ivl: n.ivl, val: n.val }) === false) return false;
    }
    return this.walk(n.right, ivl, fn);
  }

  stab(point: string): IntervalValue<V>[] {
    const out: IntervalValue<V>[] = [];
    this.visit({ begin: point, end: point + '\0' }, (iv) => {
      out.push(iv);
    });
    return out;
  }

  intersects(ivl: Interval): boolean {
    let found = false;
    this.visit(ivl, () => {
      found = true;
      return false;
    });
    return found;
  }

  all(): IntervalValue<V>[] {
    const out: IntervalValue<V>[] = [];
    const rec = (n: Node<V> | null): void => {
      if (!n) return;
      rec(n.left);
      out.push({ ivl: n.ivl, val: n.val });
      rec(n.right);
    };
    rec(this.root);
    return out;
  }

  len(): number {
    return this.count;
  }

  height(): number {
    const h = (n: Node<V> | null): number => (n ? 1 + Math.max(h(n.left), h(n.right)) : 0);
    return h(this.root);
  }
}

/** Creates an empty interval tree. */
export function newIntervalTree<V>(): IntervalTree<V> {
  return new TreapIntervalTree<V>();
}

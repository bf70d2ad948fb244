// An in-memory ordered map from string keys (latin-1 strings, i.e. byte strings, compared with `<`) to
// values: a B+tree with linked leaves, O(log n) get/insert and ordered scans from any key. Deletion removes
// an emptied leaf from its parent without merging siblings; the separators may then be stale lower bounds,
// which still route correctly (every key of child i is >= mins[i] and < mins[i+1]).

import { lowerBound } from '../storage/backend-buffer.js';

const MAX_ENTRIES = 64;

interface Leaf<V> {
  leaf: true;
  keys: string[];
  vals: V[];
  next: Leaf<V> | null;
  prev: Leaf<V> | null;
  parent: Inner<V> | null;
}

interface Inner<V> {
  leaf: false;
  /** mins[i] is a lower bound of every key in children[i] (mins[0] unused for routing). */
  mins: string[];
  children: Node<V>[];
  parent: Inner<V> | null;
}

type Node<V> = Leaf<V> | Inner<V>;

/** The child index to descend into for `key`: the last i >= 1 with mins[i] <= key, else 0. */
function childIndex(mins: string[], key: string): number {
  let lo = 1;
  let hi = mins.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (mins[mid] <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Ordered map with byte-string keys. */
export class BTreeMap<V> {
  private root: Node<V> = BTreeMap.newLeaf<V>();
  private count = 0;

  private static newLeaf<V>(): Leaf<V> {
    return { leaf: true, keys: [], vals: [], next: null, prev: null, parent: null };
  }

  get size(): number {
    return this.count;
  }

  private findLeaf(key: string): Leaf<V> {
    let n = this.root;
    while (!n.leaf) n = n.children[childIndex(n.mins, key)];
    return n;
  }

  /** The value for key, or undefined. */
  get(key: string): V | undefined {
    const l = this.findLeaf(key);
    const i = lowerBound(l.keys, key);
    return i < l.keys.length && l.keys[i] === key ? l.vals[i] : undefined;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Inserts or replaces. */
  set(key: string, val: V): void {
    const l = this.findLeaf(key);
    const i = lowerBound(l.keys, key);
    if (i < l.keys.length && l.keys[i] === key) {
      l.vals[i] = val;
      return;
    }
    l.keys.splice(i, 0, key);
    l.vals.splice(i, 0, val);
    this.count++;
    if (l.keys.length > MAX_ENTRIES) this.splitLeaf(l);
  }

  private splitLeaf(l: Leaf<V>): void {
    const half = l.keys.length >>> 1;
    const r: Leaf<V> = {
      leaf: true,
      keys: l.keys.splice(half),
      vals: l.vals.splice(half),
      next: l.next,
      prev: l,
      parent: l.parent,
    };
    if (l.next) l.next.prev = r;
    l.next = r;
    this.insertChild(l, r, r.keys[0]);
  }

  private insertChild(left: Node<V>, right: Node<V>, min: string): void {
    const p = left.parent;
    if (!p) {
      const root: Inner<V> = { leaf: false, mins: ['', min], children: [left, right], parent: null };
      left.parent = root;
      right.parent = root;
      this.root = root;
      return;
    }
    const i = p.children.indexOf(left);
    p.children.splice(i + 1, 0, right);
    p.mins.splice(i + 1, 0, min);
    right.parent = p;
    if (p.children.length > MAX_ENTRIES) {
      const half = p.children.length >>> 1;
      const r: Inner<V> = {
        leaf: false,
        mins: p.mins.splice(half),
        children: p.children.splice(half),
        parent: p.parent,
      };
      for (const c of r.children) c.parent = r;
      this.insertChild(p, r, r.mins[0]);
    }
  }

  /** Removes key; returns whether it was present. */
  delete(key: string): boolean {
    const l = this.findLeaf(key);
    const i = lowerBound(l.keys, key);
    if (i >= l.keys.length || l.keys[i] !== key) return false;
    l.keys.splice(i, 1);
    l.vals.splice(i, 1);
    this.count--;
    if (l.keys.length === 0 && l.parent) {
      if (l.prev) l.prev.next = l.next;
      if (l.next) l.next.prev = l.prev;
      this.removeChild(l);
    }
    return true;
  }

  private removeChild(n: Node<V>): void {
    const p = n.parent!;
    const i = p.children.indexOf(n);
    p.children.splice(i, 1);
    p.mins.splice(i, 1);
    if (p.children.length === 0) {
      if (p.parent) this.removeChild(p);
      else this.root = BTreeMap.newLeaf<V>();
      return;
    }
    if (!p.parent && p.children.length === 1) {
      // Shrink the height when the root has one child left.
      this.root = p.children[0];
      this.root.parent = null;
    }
  }

  /**
   * Calls fn for entries with start <= key < end in order (end undefined: to the last key);
   * fn returning false stops the scan.
   */
  forRange(start: string, end: string | undefined, fn: (key: string, val: V) => boolean | void): void {
    let l: Leaf<V> | null = this.findLeaf(start);
    let i = lowerBound(l.keys, start);
    while (l) {
      for (; i < l.keys.length; i++) {
        const k = l.keys[i];
        if (end !== undefined && k >= end) return;
        if (fn(k, l.vals[i]) === false) return;
      }
      l = l.next;
      i = 0;
    }
  }

  /** All entries in order. */
  forEach(fn: (key: string, val: V) => boolean | void): void {
    this.forRange('', undefined, fn);
  }

  clear(): void {
    this.root = BTreeMap.newLeaf<V>();
    this.count = 0;
  }
}

// A set of watchers indexed for event matching: single-key watchers in a map, ranged watchers in an
// interval tree keyed by their [key, end) interval.
import { newIntervalTree, type Interval, type IntervalTree } from './adt/interval-tree.js';

/** What the group needs to know about a watcher. */
export interface GroupMember {
  /** Latin-1 key. */
  readonly keyStr: string;
  /** null: single key; undefined: every key >= key; else the exclusive end. */
  readonly endStr: string | null | undefined;
  minRev: number;
}

function intervalOf(w: GroupMember): Interval {
  return { begin: w.keyStr, end: w.endStr === undefined ? null : (w.endStr as string) };
}

/** Watchers indexed by key and by range. */
export class WatcherGroup<W extends GroupMember> {
  private keyWatchers = new Map<string, Set<W>>();
  private ranges: IntervalTree<Set<W>> = newIntervalTree<Set<W>>();
  readonly watchers = new Set<W>();

  get size(): number {
    return this.watchers.size;
  }

  has(w: W): boolean {
    return this.watchers.has(w);
  }

  add(w: W): void {
    if (this.watchers.has(w)) return;
    this.watchers.add(w);
    if (w.endStr === null) {
      let s = this.keyWatchers.get(w.keyStr);
      if (!s) {
        s = new Set();
        this.keyWatchers.set(w.keyStr, s);
      }
      s.add(w);
      return;
    }
    const ivl = intervalOf(w);
    const found = this.ranges.find(ivl);
    if (found) found.val.add(w);
    else this.ranges.insert(ivl, new Set([w]));
  }

  delete(w: W): boolean {
    if (!this.watchers.delete(w)) return false;
    if (w.endStr === null) {
      const s = this.keyWatchers.get(w.keyStr);
      if (s) {
        s.delete(w);
        if (s.size === 0) this.keyWatchers.delete(w.keyStr);
      }
      return true;
    }
    const ivl = intervalOf(w);
    const found = this.ranges.find(ivl);
    if (found) {
      found.val.delete(w);
      if (found.val.size === 0) this.ranges.delete(ivl);
    }
    return true;
  }

  /** Whether any watcher covers key. */
  contains(key: string): boolean {
    return this.keyWatchers.has(key) || this.ranges.stab(key).length > 0;
  }

  /** The watchers covering key. */
  watchersFor(key: string): W[] {
    const out: W[] = [];
    const s = this.keyWatchers.get(key);
    if (s) out.push(...s);
    for (const iv of this.ranges.stab(key)) out.push(...iv.val);
    return out;
  }
}

// The in-memory index of all keys: an ordered map from key (latin-1 string) to its KeyIndex. Rebuilt from
// the backend on open. Ranges use [key, end) with end undefined meaning "to the last key".
import { BTreeMap } from './btree.js';
import { KeyIndex, type KeyIndexGet } from './key-index.js';
import type { Revision } from './revision.js';

/** A key and the revision holding its value at the requested revision. */
export interface IndexedRev {
  key: string;
  rev: Revision;
}

/** Ordered index of keys to their revision history. */
export class TreeIndex {
  private tree = new BTreeMap<KeyIndex>();

  /** Number of keys with any history (live or not yet compacted away). */
  get size(): number {
    return this.tree.size;
  }

  put(key: string, rev: Revision): void {
    let ki = this.tree.get(key);
    if (!ki) {
      ki = new KeyIndex(key);
      this.tree.set(key, ki);
    }
    ki.put(rev.main, rev.sub);
  }

  /** Inserts a restored key index (used while rebuilding from the backend). */
  insert(ki: KeyIndex): void {
    this.tree.set(ki.key, ki);
  }

  keyIndex(key: string): KeyIndex | undefined {
    return this.tree.get(key);
  }

  get(key: string, atRev: number): KeyIndexGet | undefined {
    return this.tree.get(key)?.get(atRev);
  }

  /** Records a delete; false if the key is not live. */
  tombstone(key: string, rev: Revision): boolean {
    const ki = this.tree.get(key);
    if (!ki) return false;
    return ki.tombstone(rev.main, rev.sub);
  }

  /**
   * Live keys in [key, end) at atRev with their value revisions, at most limit (0: all); total counts all.
   * end === null means the single key.
   */
  revisions(key: string, end: string | null | undefined, atRev: number, limit = 0): { revs: IndexedRev[]; total: number } {
    const revs: IndexedRev[] = [];
    if (end === null) {
      const g = this.get(key, atRev);
      if (g) revs.push({ key, rev: g.modified });
      return { revs, total: revs.length };
    }
    let total = 0;
    this.tree.forRange(key, end, (k, ki) => {
      const g = ki.get(atRev);
      if (!g) return;
      if (limit <= 0 || revs.length < limit) revs.push({ key: k, rev: g.modified });
      total++;
    });
    return { revs, total };
  }

  /** The number of live keys in [key, end) at atRev (end null: the single key). */
  countRevisions(key: string, end: string | null | undefined, atRev: number): number {
    if (end === null) return this.get(key, atRev) ? 1 : 0;
    let total = 0;
    this.tree.forRange(key, end, (_k, ki) => {
      if (ki.get(atRev)) total++;
    });
    return total;
  }

  /** Compacts every key at rev; returns the revisions that must stay in the backend. */
  compact(rev: number): Set<string> {
    const available = new Set<string>();
    const empty: string[] = [];
    this.tree.forEach((k, ki) => {
      ki.compact(rev, available);
      if (ki.isEmpty()) empty.push(k);
    });
    for (const k of empty) this.tree.delete(k);
    return available;
  }

  /** The revisions compact(rev) would keep, without compacting. */
  keep(rev: number): Set<string> {
    const available = new Set<string>();
    this.tree.forEach((_k, ki) => {
      ki.keep(rev, available);
    });
    return available;
  }

  clear(): void {
    this.tree.clear();
  }
}

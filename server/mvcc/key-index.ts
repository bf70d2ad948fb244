// The revision history of one key: a list of generations, each running from the key's creation to its
// deletion (a tombstone revision closes it, and an empty generation follows). Semantics follow the
// reference's key_index.go: get at a revision, revisions since a revision, compact and keep.
import { compareRev, revKey, type Revision } from './revision.js';

/** One life of a key: created at `created`, `ver` changes so far, all revisions in order. */
export interface Generation {
  ver: number;
  created: Revision;
  revs: Revision[];
}

const ZERO: Revision = { main: 0, sub: 0 };

function emptyGen(): Generation {
  return { ver: 0, created: ZERO, revs: [] };
}

/** Index of the last revision (scanning from the end) for which keepGoing returns false, or -1. */
function walk(g: Generation, keepGoing: (r: Revision) => boolean): number {
  for (let i = g.revs.length - 1; i >= 0; i--) {
    if (!keepGoing(g.revs[i])) return i;
  }
  return -1;
}

/** The result of a point lookup: the revision holding the value, its generation's creation, the version. */
export interface KeyIndexGet {
  modified: Revision;
  created: Revision;
  ver: number;
}

/** The revision history of one key. */
export class KeyIndex {
  modified: Revision = ZERO;
  generations: Generation[] = [];

  constructor(readonly key: string) {}

  /** Records a new revision of the key. */
  put(main: number, sub: number): void {
    const rev = { main, sub };
    if (compareRev(rev, this.modified) <= 0) {
      throw new Error(`mvcc: put with an unexpected smaller revision ${main}/${sub} for key`);
    }
    if (this.generations.length === 0) this.generations.push(emptyGen());
    const g = this.generations[this.generations.length - 1];
    if (g.revs.length === 0) g.created = rev;
    g.revs.push(rev);
    g.ver++;
    this.modified = rev;
  }

  /** Rebuilds the index from a stored record (the latest revision of a live key). */
  restore(created: Revision, modified: Revision, ver: number): void {
    this.modified = modified;
    this.generations = [{ created, ver, revs: [modified] }];
  }

  /** Records a delete; returns false if the key is not live. */
  tombstone(main: number, sub: number): boolean {
    if (this.isEmpty()) throw new Error('mvcc: tombstone on an empty key index');
    if (this.generations[this.generations.length - 1].revs.length === 0) return false;
    this.put(main, sub);
    this.generations.push(emptyGen());
    return true;
  }

  isEmpty(): boolean {
    return this.generations.length === 1 && this.generations[0].revs.length === 0;
  }

  /** The value-holding revision at atRev, or undefined if the key did not exist then. */
  get(atRev: number): KeyIndexGet | undefined {
    if (this.isEmpty()) return undefined;
    const g = this.findGeneration(atRev);
    if (!g || g.revs.length === 0) return undefined;
    const n = walk(g, (r) => r.main > atRev);
    if (n === -1) return undefined;
    return { modified: g.revs[n], created: g.created, ver: g.ver - (g.revs.length - n - 1) };
  }

  /** Revisions with main >= rev, one per main revision (the last sub wins). */
  since(rev: number): Revision[] {
    if (this.isEmpty()) return [];
    const since: Revision = { main: rev, sub: 0 };
    let gi = this.generations.length - 1;
    for (; gi > 0; gi--) {
      const g = this.generations[gi];
      if (g.revs.length === 0) continue;
      if (compareRev(since, g.created) > 0) break;
    }
    const out: Revision[] = [];
    let last = -1;
    for (; gi < this.generations.length; gi++) {
      for (const r of this.generations[gi].revs) {
        if (compareRev(since, r) > 0) continue;
        if (r.main === last) {
          out[out.length - 1] = r;
          continue;
        }
        out.push(r);
        last = r.main;
      }
    }
    return out;
  }

  /** The generation live at rev, or undefined. */
  private findGeneration(rev: number): Generation | undefined {
    const lastg = this.generations.length - 1;
    for (let cg = lastg; cg >= 0; cg--) {
      const g = this.generations[cg];
      if (g.revs.length === 0) continue;
      if (cg !== lastg) {
        const tomb = g.revs[g.revs.length - 1].main;
        if (tomb <= rev) return undefined;
      }
      if (g.revs[0].main <= rev) return g;
    }
    return undefined;
  }

  private doCompact(atRev: number, available: Set<string>): { genIdx: number; revIndex: number } {
    let genIdx = 0;
    let g = this.generations[0];
    // Skip the generations whose tombstone is at or before atRev.
    while (genIdx < this.generations.length - 1) {
      const tomb = g.revs[g.revs.length - 1].main;
      if (tomb > atRev) break;
      genIdx++;
      g = this.generations[genIdx];
    }
    const revIndex = walk(g, (r) => {
      if (r.main <= atRev) {
        available.add(revKey(r));
        return false;
      }
      return true;
    });
    return { genIdx, revIndex };
  }

  /**
   * Drops revisions older than the newest one at or before atRev; adds the revisions that must stay in
   * the backend to `available`. A tombstone alone in an old generation is dropped too.
   */
  compact(atRev: number, available: Set<string>): void {
    if (this.isEmpty()) return;
    const found = this.doCompact(atRev, available);
    const revIndex = found.revIndex;
    let genIdx = found.genIdx;
    const g = this.generations[genIdx];
    if (g.revs.length > 0) {
      if (revIndex !== -1) g.revs = g.revs.slice(revIndex);
      if (g.revs.length === 1 && genIdx !== this.generations.length - 1) {
        available.delete(revKey(g.revs[0]));
        genIdx++;
      }
    }
    this.generations = this.generations.slice(genIdx);
  }

  /** Like compact, but only reports what compact(atRev) would keep, without changing the index. */
  keep(atRev: number, available: Set<string>): void {
    if (this.isEmpty()) return;
    const { genIdx, revIndex } = this.doCompact(atRev, available);
    const g = this.generations[genIdx];
    if (g.revs.length > 0 && revIndex === g.revs.length - 1 && genIdx !== this.generations.length - 1) {
      available.delete(revKey(g.revs[revIndex]));
    }
  }
}

// The node's view of the log: what storage holds plus the unstable tail, with the commit and
// applied marks.

import { CompactedError, RaftError, UnavailableError } from './errors.js';
import type { MemoryStorage } from './storage.js';
import type { Entry, Snapshot } from './types.js';
import { Unstable } from './unstable.js';
import { limitSize } from './util.js';

/** The replicated log of one node. */
export class RaftLog {
  readonly unstable: Unstable;
  /** Highest index known to be stored on a quorum. */
  committed: number;
  /** Highest index the application has applied (committed >= applied). */
  applied: number;

  constructor(
    readonly storage: MemoryStorage,
    readonly maxNextEntsSize = Infinity,
  ) {
    const first = storage.firstIndex();
    const last = storage.lastIndex();
    this.unstable = new Unstable(last + 1);
    this.committed = first - 1;
    this.applied = first - 1;
  }

  /** Appends ents after (index, logTerm) if that entry matches; returns the new last index or -1. */
  maybeAppend(index: number, logTerm: number, committed: number, ents: Entry[]): number {
    if (!this.matchTerm(index, logTerm)) return -1;
    const lastNew = index + ents.length;
    const ci = this.findConflict(ents);
    if (ci !== 0) {
      if (ci <= this.committed) {
        throw new RaftError('Internal', `entry ${ci} conflicts with committed entry [committed(${this.committed})]`);
      }
      this.append(ci === index + 1 ? ents : ents.slice(ci - (index + 1)));
    }
    this.commitTo(Math.min(committed, lastNew));
    return lastNew;
  }

  /** Appends ents to the unstable tail; returns the new last index. */
  append(ents: Entry[]): number {
    if (ents.length === 0) return this.lastIndex();
    const after = ents[0].index - 1;
    if (after < this.committed) {
      throw new RaftError('Internal', `after(${after}) is out of range [committed(${this.committed})]`);
    }
    this.unstable.truncateAndAppend(ents);
    return this.lastIndex();
  }

  /** The first entry of ents that conflicts with (or is missing from) the log; 0 if none. */
  findConflict(ents: Entry[]): number {
    for (const e of ents) {
      if (!this.matchTerm(e.index, e.term)) return e.index;
    }
    return 0;
  }

  /** The largest index <= index whose term is <= term (the leader's backtracking hint). */
  findConflictByTerm(index: number, term: number): number {
    const li = this.lastIndex();
    if (index > li) return index;
    for (; index > 0; index--) {
      let t: number;
      try {
        t = this.term(index);
      } catch {
        return index;
      }
      if (t <= term) return index;
    }
    return 0;
  }

  /** Entries not yet persisted. */
  unstableEntries(): Entry[] {
    // A copy: the caller persists these asynchronously while new entries may be appended.
    return this.unstable.entries.slice();
  }

  /** Committed entries the application has not applied yet. */
  nextEnts(): Entry[] {
    const off = Math.max(this.applied + 1, this.firstIndex());
    if (this.committed + 1 > off) return this.slice(off, this.committed + 1, this.maxNextEntsSize);
    return [];
  }

  /** Whether there are committed entries to apply. */
  hasNextEnts(): boolean {
    return this.committed + 1 > Math.max(this.applied + 1, this.firstIndex());
  }

  /** Whether a snapshot is waiting to be persisted and applied. */
  hasPendingSnapshot(): boolean {
    return this.unstable.snapshot !== undefined;
  }

  /** The newest snapshot (pending or stored). */
  snapshot(): Snapshot {
    return this.unstable.snapshot ?? this.storage.snapshot();
  }

  firstIndex(): number {
    return this.unstable.maybeFirstIndex() ?? this.storage.firstIndex();
  }

  lastIndex(): number {
    return this.unstable.maybeLastIndex() ?? this.storage.lastIndex();
  }

  /** Raises the commit mark (never lowers it). */
  commitTo(toCommit: number): void {
    if (this.committed < toCommit) {
      if (this.lastIndex() < toCommit) {
        throw new RaftError('Internal', `tocommit(${toCommit}) is out of range [lastIndex(${this.lastIndex()})]`);
      }
      this.committed = toCommit;
    }
  }

  /** Records that the application applied up to i. */
  appliedTo(i: number): void {
    if (i === 0) return;
    if (this.committed < i || i < this.applied) {
      throw new RaftError('Internal', `applied(${i}) is out of range [prevApplied(${this.applied}), committed(${this.committed})]`);
    }
    this.applied = i;
  }

  stableTo(i: number, t: number): void {
    this.unstable.stableTo(i, t);
  }

  stableSnapTo(i: number): void {
    this.unstable.stableSnapTo(i);
  }

  /** The last index the caller has persisted (before the unstable tail). */
  lastStableIndex(): number {
    return this.unstable.entries.length > 0 ? this.unstable.offset - 1 : this.lastIndex();
  }

  lastTerm(): number {
    return this.zeroTermOnErr(this.lastIndex());
  }

  /** The term of entry i: 0 when out of range; throws Compacted/Unavailable from storage. */
  term(i: number): number {
    const dummy = this.firstIndex() - 1;
    if (i < dummy || i > this.lastIndex()) return 0;
    const t = this.unstable.maybeTerm(i);
    if (t !== undefined) return t;
    return this.storage.term(i);
  }

  /** term(i), or 0 when it is not available. */
  zeroTermOnErr(i: number): number {
    try {
      return this.term(i);
    } catch (e) {
      if (e instanceof CompactedError || e instanceof UnavailableError) return 0;
      throw e;
    }
  }

  /** Up to maxSize bytes of entries from i on. */
  entries(i: number, maxSize: number): Entry[] {
    if (i > this.lastIndex()) return [];
    return this.slice(i, this.lastIndex() + 1, maxSize);
  }

  /** Whether a candidate's log (last index, last term) is at least as up to date as ours. */
  isUpToDate(lasti: number, term: number): boolean {
    const lt = this.lastTerm();
    return term > lt || (term === lt && lasti >= this.lastIndex());
  }

  matchTerm(i: number, term: number): boolean {
    try {
      return this.term(i) === term;
    } catch {
      return false;
    }
  }

  /** Commits up to maxIndex if that entry is from `term` (only current-term entries commit by counting). */
  maybeCommit(maxIndex: number, term: number): boolean {
    if (maxIndex > this.committed && this.zeroTermOnErr(maxIndex) === term) {
      this.commitTo(maxIndex);
      return true;
    }
    return false;
  }

  /** Resets the log to an incoming snapshot. */
  restore(s: Snapshot): void {
    this.committed = s.metadata.index;
    this.unstable.restore(s);
  }

  /** Entries [lo, hi) within maxSize bytes; throws Compacted when lo was compacted. */
  slice(lo: number, hi: number, maxSize = Infinity): Entry[] {
    this.mustCheckOutOfBounds(lo, hi);
    if (lo === hi) return [];
    let ents: Entry[] = [];
    const off = this.unstable.offset;
    if (lo < off) {
      const stored = this.storage.entries(lo, Math.min(hi, off), maxSize);
      // Storage returned less than asked (size limit): stop there.
      if (stored.length < Math.min(hi, off) - lo) return stored;
      ents = stored;
    }
    if (hi > off) {
      const uns = this.unstable.slice(Math.max(lo, off), hi);
      ents = ents.length > 0 ? ents.concat(uns) : uns;
    }
    return limitSize(ents, maxSize);
  }

  private mustCheckOutOfBounds(lo: number, hi: number): void {
    if (lo > hi) throw new RaftError('Internal', `invalid slice ${lo} > ${hi}`);
    const fi = this.firstIndex();
    if (lo < fi) throw new CompactedError();
    const length = this.lastIndex() + 1 - fi;
    if (hi > fi + length) throw new RaftError('Internal', `slice[${lo},${hi}) out of bound [${fi},${this.lastIndex()}]`);
  }
}

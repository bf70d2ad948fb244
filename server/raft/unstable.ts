// The tail of the log not yet handed to storage: entries (and possibly an incoming snapshot) the
// caller still has to persist. They move to storage when the caller calls advance().

import type { Entry, Snapshot } from './types.js';

/** Entries and snapshot not yet persisted; entries[i] has index offset + i. */
export class Unstable {
  snapshot: Snapshot | undefined = undefined;
  entries: Entry[] = [];
  constructor(public offset: number) {}

  /** First index when a snapshot is pending (storage does not know it yet). */
  maybeFirstIndex(): number | undefined {
    return this.snapshot ? this.snapshot.metadata.index + 1 : undefined;
  }

  /** Last index of the unstable entries or pending snapshot. */
  maybeLastIndex(): number | undefined {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1;
    return this.snapshot ? this.snapshot.metadata.index : undefined;
  }

  /** The term of entry i if it is held here. */
  maybeTerm(i: number): number | undefined {
    if (i < this.offset) {
      if (this.snapshot && this.snapshot.metadata.index === i) return this.snapshot.metadata.term;
      return undefined;
    }
    const last = this.maybeLastIndex();
    if (last === undefined || i > last) return undefined;
    return this.entries[i - this.offset].term;
  }

  /** Entries up to (i, t) are now stable: drop them. */
  stableTo(i: number, t: number): void {
    const gt = this.maybeTerm(i);
    if (gt === undefined) return;
    // Only if the entry was not replaced meanwhile by a conflicting one.
    if (gt === t && i >= this.offset) {
      this.entries = this.entries.slice(i + 1 - this.offset);
      this.offset = i + 1;
    }
  }

  /** The pending snapshot at i is now stable. */
  stableSnapTo(i: number): void {
    if (this.snapshot && this.snapshot.metadata.index === i) this.snapshot = undefined;
  }

  /** Replaces everything by an incoming snapshot. */
  restore(s: Snapshot): void {
    this.offset = s.metadata.index + 1;
    this.entries = [];
    this.snapshot = s;
  }

  /** Appends ents, truncating any conflicting suffix first. */
  truncateAndAppend(ents: Entry[]): void {
    const after = ents[0].index;
    if (after === this.offset + this.entries.length) {
      for (const e of ents) this.entries.push(e);
    } else if (after <= this.offset) {
      // Replace all unstable entries; storage's conflicting suffix is replaced when these are persisted.
      this.offset = after;
      this.entries = ents.slice();
    } else {
      this.entries = this.entries.slice(0, after - this.offset);
      for (const e of ents) this.entries.push(e);
    }
  }

  /** Entries [lo, hi) held here. */
  slice(lo: number, hi: number): Entry[] {
    return this.entries.slice(lo - this.offset, hi - this.offset);
  }
}

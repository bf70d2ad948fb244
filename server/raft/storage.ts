// The raft log storage the caller owns. The caller appends what Ready.entries/hardState/snapshot say
// (after making them durable); the consensus core only reads from it. In-memory: a durable
// implementation mirrors it on disk and reloads it at start.

import { CompactedError, RaftError, SnapOutOfDateError, UnavailableError } from './errors.js';
import type { ConfState, Entry, HardState, Snapshot } from './types.js';
import { NONE } from './types.js';
import { entrySize } from './util.js';

/** The empty hard state (term 0, no vote, nothing committed). */
export function emptyHardState(): HardState {
  return { term: 0, vote: NONE, commit: 0 };
}

/** The empty snapshot (index 0). */
export function emptySnapshot(): Snapshot {
  return { metadata: { index: 0, term: 0, confState: { voters: [], learners: [] } }, data: new Uint8Array(0) };
}

/** Raft log storage in memory: a snapshot followed by the entries after it. */
export class MemoryStorage {
  private hardState: HardState = emptyHardState();
  private snap: Snapshot = emptySnapshot();
  // ents[0] is a dummy entry standing for the snapshot point (its index and term); real entries follow.
  private ents: Entry[] = [{ term: 0, index: 0, type: 0, data: new Uint8Array(0) }];

  /** The saved hard state and the membership as of the snapshot. */
  initialState(): { hardState: HardState; confState: ConfState } {
    const cs = this.snap.metadata.confState;
    return { hardState: { ...this.hardState }, confState: { voters: [...cs.voters], learners: [...cs.learners] } };
  }

  /** Saves the hard state. */
  setHardState(hs: HardState): void {
    this.hardState = { term: hs.term, vote: hs.vote, commit: hs.commit };
  }

  /** Entries in [lo, hi), at most maxBytes (but at least one entry). */
  entries(lo: number, hi: number, maxBytes = Infinity): Entry[] {
    const offset = this.ents[0].index;
    if (lo <= offset) throw new CompactedError();
    if (hi > this.lastIndex() + 1) throw new UnavailableError();
    if (this.ents.length === 1) throw new UnavailableError();
    if (maxBytes === Infinity) return this.ents.slice(lo - offset, hi - offset);
    // Find the cut first so a far-behind reader does not copy the whole tail.
    let end = lo - offset + 1;
    let size = entrySize(this.ents[lo - offset]);
    while (end < hi - offset) {
      size += entrySize(this.ents[end]);
      if (size > maxBytes) break;
      end++;
    }
    return this.ents.slice(lo - offset, end);
  }

  /** The term of entry i (the snapshot's term for the snapshot index). */
  term(i: number): number {
    const offset = this.ents[0].index;
    if (i < offset) throw new CompactedError();
    if (i - offset >= this.ents.length) throw new UnavailableError();
    return this.ents[i - offset].term;
  }

  /** The first index still available (one after the snapshot). */
  firstIndex(): number {
    return this.ents[0].index + 1;
  }

  /** The index of the last entry (or of the snapshot when there are none). */
  lastIndex(): number {
    return this.ents[0].index + this.ents.length - 1;
  }

  /** The most recent snapshot. */
  snapshot(): Snapshot {
    return this.snap;
  }

  /** Replaces the storage's contents with a snapshot (entries are discarded). */
  applySnapshot(s: Snapshot): void {
    if (this.snap.metadata.index >= s.metadata.index) throw new SnapOutOfDateError();
    this.snap = s;
    this.ents = [{ term: s.metadata.term, index: s.metadata.index, type: 0, data: new Uint8Array(0) }];
  }

  /** Records a snapshot of the application's state at index i (i must be stored, not compacted). */
  createSnapshot(i: number, cs: ConfState | undefined, data: Uint8Array): Snapshot {
    if (i <= this.snap.metadata.index) throw new SnapOutOfDateError();
    const offset = this.ents[0].index;
    if (i > this.lastIndex()) throw new RaftError('Internal', `snapshot ${i} is out of bound lastindex(${this.lastIndex()})`);
    const confState = cs ? { voters: [...cs.voters], learners: [...cs.learners] } : this.snap.metadata.confState;
    this.snap = { metadata: { index: i, term: this.ents[i - offset].term, confState }, data };
    return this.snap;
  }

  /** Discards entries up to compactIndex (which becomes the dummy entry). Never compact past the latest snapshot's successor entries you still need. */
  compact(compactIndex: number): void {
    const offset = this.ents[0].index;
    if (compactIndex <= offset) throw new CompactedError();
    if (compactIndex > this.lastIndex()) throw new RaftError('Internal', `compact ${compactIndex} is out of bound lastindex(${this.lastIndex()})`);
    const i = compactIndex - offset;
    const dummy: Entry = { term: this.ents[i].term, index: this.ents[i].index, type: 0, data: new Uint8Array(0) };
    const rest = this.ents.slice(i + 1);
    rest.unshift(dummy);
    this.ents = rest;
  }

  /** Appends entries, replacing any stored entries at the same or later indexes. */
  append(entries: Entry[]): void {
    if (entries.length === 0) return;
    const first = this.firstIndex();
    const last = entries[0].index + entries.length - 1;
    if (last < first) return; // everything is already compacted
    let start = 0;
    if (first > entries[0].index) start = first - entries[0].index; // skip the compacted part
    const offset = entries[start].index - this.ents[0].index;
    if (offset > this.ents.length) {
      throw new RaftError('Internal', `missing log entry [last: ${this.lastIndex()}, append at: ${entries[start].index}]`);
    }
    if (offset < this.ents.length) this.ents.length = offset; // truncate the conflicting suffix
    for (let k = start; k < entries.length; k++) this.ents.push(entries[k]);
  }
}

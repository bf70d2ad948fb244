// The multi-version key-value store on a Backend: every change is kept under its revision in the "key"
// bucket, an in-memory index maps keys to revisions, and compaction drops history older than a revision.
// Transactions follow the reference's TxnRead/TxnWrite: one write txn gets one main revision, and its
// changes get sub revisions 0, 1, ... in order. Everything is synchronous: no awaits between a txn's start
// and end, so txns are serial by construction.
import type { Logger } from '../log/logger.js';
import { nopLogger } from '../log/logger.js';
import { duration } from '../log/fields.js';
import type { Backend, BackendBatchTx } from '../storage/backend.js';
import { crc32c } from '../storage/crc.js';
import { errCompacted, errFutureRev, MvccError } from './errors.js';
import type { MvccEvent } from './event.js';
import { KeyIndex } from './key-index.js';
import { crcReferenceKv, decodeKv, encodeKv, keyStr, newKvRecord, normalizeEnd, type KeyValue } from './kv.js';
import { bytesToRev, isTombstone, mainRevBound, revKey, revToBytes, type Revision } from './revision.js';
import { TreeIndex } from './tree-index.js';

const KEY_BUCKET = 'key';
const META_BUCKET = 'meta';
const SCHEDULED_COMPACT_KEY = new TextEncoder().encode('scheduledCompactRev');
const FINISHED_COMPACT_KEY = new TextEncoder().encode('finishedCompactRev');
const SCAN_CHUNK = 10000;
/** Revisions examined per background compaction step by default (the reference's default batch is 1000). */
const COMPACTION_BATCH = 1000;
/** The pause between those steps by default (ms; the reference's --experimental-compaction-sleep-interval, 10ms). */
const COMPACTION_SLEEP_MS = 10;
const EMPTY = new Uint8Array(0);
/** HashKV starts from the bucket's name, as the reference's does. */
const HASH_SEED = crc32c(Buffer.from(KEY_BUCKET, 'latin1'));

/**
 * HashKV's rule for one "key" bucket entry (the reference's): below the compaction point `compactRev` only the
 * revisions compaction keeps count (all of them when it keeps none); the key, then the value as the reference
 * encodes it.
 */
function hashEntry(h: number, key: Uint8Array, value: Uint8Array, compactRev: number, keep: Set<string>): number {
  const r = bytesToRev(key);
  if (r.main <= compactRev && keep.size > 0 && !keep.has(revKey(r))) return h;
  return crcReferenceKv(crc32c(key, h), value, isTombstone(key));
}

/** What the store needs from the lessor (implemented by Lessor). */
export interface LeaseHooks {
  /** Whether a lease with this id exists. */
  exists(id: bigint): boolean;
  /** The lease a key is attached to, 0n if none. */
  leaseOf(key: string): bigint;
  attach(id: bigint, key: string): void;
  detach(id: bigint, key: string): void;
}

export interface RangeOptions {
  /** At most this many kvs (0: no limit); count still reports all. */
  limit?: number;
  /** Read at this revision (0: current). */
  rev?: number;
  countOnly?: boolean;
  /** Omit values (kvs carry empty values). */
  keysOnly?: boolean;
}

export interface RangeResult {
  kvs: KeyValue[];
  /** Number of keys in the range at the read revision (ignores limit). */
  count: number;
  /** The store's current revision. */
  rev: number;
}

/** A read transaction: a consistent view at the revision current when it began. */
export interface ReadTxn {
  /** Keys in [key, end): end empty/undefined = exactly key; end "\0" = every key >= key. */
  range(key: Uint8Array, end?: Uint8Array | null, opts?: RangeOptions): RangeResult;
  /** The revision the txn reads at. */
  rev(): number;
  end(): void;
}

/** A write transaction: all its changes get one new main revision when it ends. */
export interface WriteTxn extends ReadTxn {
  /**
   * Writes key=value (lease 0n: none); returns the previous kv, if any. With `withPrev` false the previous kv is not
   * read (undefined is returned): the event then carries its revision, read only for a watcher that asks for it.
   */
  put(key: Uint8Array, value: Uint8Array, lease?: bigint, withPrev?: boolean): KeyValue | undefined;
  /** Deletes the keys in [key, end); returns the deleted kvs (their last states). */
  deleteRange(key: Uint8Array, end?: Uint8Array | null): KeyValue[];
  /** The events so far. */
  changes(): readonly MvccEvent[];
}

/** Counters for /metrics (svc_mvcc_*). */
export interface StoreStats {
  putTotal: number;
  deleteTotal: number;
  txnTotal: number;
  rangeTotal: number;
  keysTotal: number;
  currentRevision: number;
  compactRevision: number;
  dbTotalSize: number;
  dbTotalSizeInUse: number;
}

/** The KV hash a compaction took at its revision, over the store as the previous compaction left it. */
export interface CompactionHash {
  hash: number;
  compactRevision: number;
  revision: number;
}

/** How many compaction hashes are kept (the reference keeps 10). */
const COMPACTION_HASHES_KEPT = 10;

export interface HashKvResult {
  hash: number;
  /** The store's current revision. */
  currentRev: number;
  compactRev: number;
  /** The revision the hash covers. */
  hashRev: number;
}

/** Who hears how a compaction went (the metrics layer installs these): one full batch's pause (ms), then the whole compaction (ms) and the keys it deleted. */
export interface CompactionObservers {
  compactionPause?: (ms: number) => void;
  compactionDone?: (ms: number, keys: number) => void;
}

export interface MvccStoreOptions {
  logger?: Logger;
  lessor?: LeaseHooks & { setRangeDeleter?(fn: () => WriteTxn): void };
  /** Background compaction: revisions per batch, the pause between batches, and who hears how it went. */
  compaction?: { batchLimit?: number; sleepMs?: number; observers?: CompactionObservers };
}

/** Listener of committed changes (the watchable store). */
export type ChangeListener = (rev: number, events: MvccEvent[]) => void;

/** The multi-version key-value store. */
export class MvccStore {
  private backend: Backend;
  private index = new TreeIndex();
  private currentRev = 1;
  private compactMainRev = -1;
  private writeOpen = false;
  private listeners: ChangeListener[] = [];
  private readonly logger: Logger;
  private lessor: MvccStoreOptions['lessor'];
  private readonly compaction: { batchLimit: number; sleepMs: number; observers?: CompactionObservers };
  private counters = { put: 0, delete: 0, txn: 0, range: 0 };
  private compactionTail: Promise<void> = Promise.resolve();
  private compactionHashes: CompactionHash[] = [];
  /** Bumped by restore, so background compactions of the previous data stop. */
  private epoch = 0;

  constructor(backend: Backend, opts: MvccStoreOptions = {}) {
    this.backend = backend;
    this.logger = opts.logger ?? nopLogger;
    this.compaction = { batchLimit: opts.compaction?.batchLimit ?? COMPACTION_BATCH, sleepMs: opts.compaction?.sleepMs ?? COMPACTION_SLEEP_MS, observers: opts.compaction?.observers };
    this.lessor = opts.lessor;
    this.lessor?.setRangeDeleter?.(() => this.write());
    this.restoreFromBackend();
  }

  /** The current revision (1 on an empty store). */
  rev(): number {
    return this.currentRev;
  }

  /** The last compaction revision (-1: never compacted). */
  compactRev(): number {
    return this.compactMainRev;
  }

  getBackend(): Backend {
    return this.backend;
  }

  /** Registers a listener called after each write txn with changes. */
  onChanges(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /** Starts a read transaction. */
  read(): ReadTxn {
    const rev = this.currentRev;
    let ops = 0;
    return {
      range: (key, end, opts = {}) => {
        ops++;
        this.counters.range++;
        return this.rangeKeys(key, end, rev, opts);
      },
      rev: () => rev,
      end: () => {
        if (ops > 1) this.counters.txn++;
      },
    };
  }

  /** Starts the (only) write transaction. */
  write(): WriteTxn {
    if (this.writeOpen) throw new MvccError('TXN_IN_PROGRESS');
    this.writeOpen = true;
    return new StoreWriteTxn(this, this.backend.batchTx(), this.currentRev);
  }

  /** One-shot read. */
  range(key: Uint8Array, end?: Uint8Array | null, opts?: RangeOptions): RangeResult {
    const t = this.read();
    try {
      return t.range(key, end, opts);
    } finally {
      t.end();
    }
  }

  /** One-shot put; returns the new revision and the previous kv. */
  put(key: Uint8Array, value: Uint8Array, lease = 0n): { rev: number; prevKv?: KeyValue } {
    const t = this.write();
    let prevKv: KeyValue | undefined;
    try {
      prevKv = t.put(key, value, lease);
    } finally {
      t.end();
    }
    return { rev: this.currentRev, prevKv };
  }

  /** One-shot delete; returns the revision and the deleted kvs. */
  deleteRange(key: Uint8Array, end?: Uint8Array | null): { rev: number; deleted: KeyValue[] } {
    const t = this.write();
    let deleted: KeyValue[];
    try {
      deleted = t.deleteRange(key, end);
    } finally {
      t.end();
    }
    return { rev: this.currentRev, deleted };
  }

  /** @internal range at curRev for a txn. */
  rangeKeys(key: Uint8Array, end: Uint8Array | null | undefined, curRev: number, ro: RangeOptions): RangeResult {
    let rev = ro.rev ?? 0;
    if (rev > curRev) throw errFutureRev();
    if (rev <= 0) rev = curRev;
    if (rev < this.compactMainRev) throw errCompacted(this.compactMainRev);
    const k = keyStr(key);
    const e = normalizeEnd(end);
    if (e !== null && e !== undefined && e <= k) return { kvs: [], count: 0, rev: curRev };
    if (ro.countOnly) return { kvs: [], count: this.index.countRevisions(k, e, rev), rev: curRev };
    const { revs, total } = this.index.revisions(k, e, rev, ro.limit ?? 0);
    const kvs: KeyValue[] = [];
    const tx = this.backend.readTx();
    for (const r of revs) {
      const raw = tx.get(KEY_BUCKET, revToBytes(r.rev));
      if (!raw) throw new Error(`mvcc: revision ${r.rev.main}/${r.rev.sub} missing from the backend`);
      // raw is this read's own copy (lmdb's getBinary) or a pending write's bytes, which nothing changes: views suffice
      const kv = decodeKv(raw, false);
      if (ro.keysOnly) kv.value = EMPTY;
      kvs.push(kv);
    }
    return { kvs, count: total, rev: curRev };
  }

  /**
   * An event's previous kv: the one read at the write, else (a put that did not read it) read now from the revision
   * the event names, and kept on the event for the next watcher. Called right after the write, before a compaction
   * can remove that revision; undefined if it is gone all the same.
   */
  prevKvOf(ev: MvccEvent): KeyValue | undefined {
    if (ev.prevKv || !ev.prevRev) return ev.prevKv;
    const raw = this.backend.readTx().get(KEY_BUCKET, revToBytes(ev.prevRev));
    if (raw) ev.prevKv = decodeKv(raw);
    ev.prevRev = undefined;
    return ev.prevKv;
  }

  /** @internal */
  getIndex(): TreeIndex {
    return this.index;
  }

  /** @internal */
  getLessor(): LeaseHooks | undefined {
    return this.lessor;
  }

  /** @internal called by the write txn when it ends. */
  finishWrite(changes: MvccEvent[], counts: { puts: number; deletes: number; ranges: number }): void {
    this.writeOpen = false;
    if (counts.puts + counts.deletes + counts.ranges > 1) this.counters.txn++;
    this.counters.put += counts.puts;
    this.counters.delete += counts.deletes;
    this.counters.range += counts.ranges;
    if (changes.length === 0) {
      this.backend.batchTx().end();
      return;
    }
    this.currentRev++;
    this.backend.batchTx().end();
    for (const l of this.listeners) l(this.currentRev, changes);
  }

  /**
   * Discards history before rev: reads below rev fail with ErrCompacted at once (the index is compacted
   * synchronously); each key keeps its newest revision at or before rev. The old revisions are deleted
   * from the backend in the background, COMPACTION_BATCH at a time with a yield between batches so a big
   * compaction never stalls the event loop (the reference does the same); `done` resolves when that
   * finished (the Compact RPC's `physical` flag waits for it). It never rejects.
   */
  compact(rev: number): { compactRev: number; prevCompactRev: number; done: Promise<void> } {
    if (rev <= this.compactMainRev) throw errCompacted(this.compactMainRev);
    if (rev > this.currentRev) throw errFutureRev();
    const prev = this.compactMainRev;
    this.compactMainRev = rev;
    const tx = this.backend.batchTx();
    tx.put(META_BUCKET, SCHEDULED_COMPACT_KEY, revToBytes({ main: rev, sub: 0 }));
    tx.end();
    const keep = this.index.compact(rev);
    return { compactRev: rev, prevCompactRev: prev, done: this.scheduleCompaction(rev, prev, keep) };
  }

  /** Resolves when every compaction scheduled so far has been applied to the backend. */
  compactionsDone(): Promise<void> {
    return this.compactionTail;
  }

  private scheduleCompaction(rev: number, prev: number, keep: Set<string>): Promise<void> {
    const epoch = this.epoch;
    const backend = this.backend;
    const job = this.compactionTail.then(() => this.runCompaction(rev, prev, keep, epoch, backend));
    this.compactionTail = job;
    return job;
  }

  private async runCompaction(rev: number, prev: number, keep: Set<string>, epoch: number, backend: Backend): Promise<void> {
    const end = mainRevBound(rev + 1);
    let start = mainRevBound(0);
    // the KV hash at `rev` as it stood with the previous compaction (HashKV's rules), taken on the way through: the
    // compaction hash check compares it with the peers' (stored below)
    let h = HASH_SEED;
    const { batchLimit, sleepMs, observers } = this.compaction;
    const began = performance.now();
    let deleted = 0;
    try {
      while (true) {
        // A restore swapped the data, or the backend closed: the next open resumes from the meta keys.
        if (epoch !== this.epoch || backend !== this.backend) return;
        const batchStart = performance.now();
        const tx = backend.batchTx();
        const chunk = tx.range(KEY_BUCKET, start, end, batchLimit);
        for (const { key, value } of chunk) {
          h = hashEntry(h, key, value, prev, keep);
          if (!keep.has(revKey(bytesToRev(key)))) {
            tx.delete(KEY_BUCKET, key);
            deleted++;
          }
        }
        if (chunk.length < batchLimit) {
          tx.put(META_BUCKET, FINISHED_COMPACT_KEY, revToBytes({ main: rev, sub: 0 }));
          tx.end();
          const took = performance.now() - began;
          observers?.compactionDone?.(took, deleted);
          const hash = { hash: h >>> 0, compactRevision: prev, revision: rev };
          this.logger.info('finished scheduled compaction', { 'compact-revision': rev, took: duration(took), hash: hash.hash });
          this.storeCompactionHash(hash);
          return;
        }
        tx.end();
        observers?.compactionPause?.(performance.now() - batchStart);
        start = successor(chunk[chunk.length - 1].key);
        // the pause lets requests in between batches (never a tight loop, even at 0)
        await new Promise<void>((resolve) => (sleepMs > 0 ? setTimeout(resolve, sleepMs) : setImmediate(resolve)));
      }
    } catch (err) {
      if ((err as { code?: string }).code === 'BACKEND_CLOSED') return;
      this.logger.error('compaction failed', { 'compact-revision': rev, error: (err as Error).message });
    }
  }

  /** Keeps the hash a compaction took, the newest COMPACTION_HASHES_KEPT of them in revision order. */
  private storeCompactionHash(hash: CompactionHash): void {
    this.logger.info('storing new hash', { hash: hash.hash, revision: hash.revision, 'compact-revision': hash.compactRevision });
    this.compactionHashes = [...this.compactionHashes, hash].sort((a, b) => a.revision - b.revision).slice(-COMPACTION_HASHES_KEPT);
  }

  /** The hashes the last compactions took, oldest first (in memory only: a restarted member has none). */
  storedCompactionHashes(): readonly CompactionHash[] {
    return this.compactionHashes;
  }

  /** crc32 of the whole backend (Maintenance.Hash). */
  hash(): { hash: number; revision: number } {
    return { hash: this.backend.hash(), revision: this.currentRev };
  }

  /**
   * HashKV: crc32 over the "key" bucket's entries a store compacted at `rev` would hold up to `rev`
   * (0: current revision), so members that applied the same history agree.
   */
  hashByRev(rev: number): HashKvResult {
    const compactRev = this.compactMainRev;
    const currentRev = this.currentRev;
    // a compaction's own revision answers with the hash that compaction took, as the reference does (compacted or not)
    const stored = this.compactionHashes.find((x) => x.revision === rev);
    if (stored) return { hash: stored.hash, currentRev, compactRev: stored.compactRevision, hashRev: rev };
    if (rev > 0 && rev <= compactRev) throw errCompacted(compactRev);
    if (rev > 0 && rev > currentRev) throw errFutureRev();
    if (rev === 0) rev = currentRev;
    const keep = this.index.keep(rev);
    let h = HASH_SEED;
    const tx = this.backend.readTx();
    const end = mainRevBound(rev + 1);
    let start = mainRevBound(0);
    while (true) {
      const chunk = tx.range(KEY_BUCKET, start, end, SCAN_CHUNK);
      for (const { key, value } of chunk) h = hashEntry(h, key, value, compactRev, keep);
      if (chunk.length < SCAN_CHUNK) break;
      start = successor(chunk[chunk.length - 1].key);
    }
    return { hash: h >>> 0, currentRev, compactRev, hashRev: rev };
  }

  /** Rebuilds the index from a (possibly new) backend, e.g. after applying a raft snapshot. */
  restore(backend?: Backend): void {
    if (backend) this.backend = backend;
    this.restoreFromBackend();
  }

  private restoreFromBackend(): void {
    this.epoch++;
    this.index.clear();
    this.currentRev = 1;
    this.compactMainRev = -1;
    const tx = this.backend.readTx();
    const finished = tx.get(META_BUCKET, FINISHED_COMPACT_KEY);
    if (finished) this.compactMainRev = bytesToRev(finished).main;
    const scheduledRaw = tx.get(META_BUCKET, SCHEDULED_COMPACT_KEY);
    const scheduled = scheduledRaw ? bytesToRev(scheduledRaw).main : 0;

    const keyToLease = new Map<string, bigint>();
    let start = mainRevBound(1);
    while (true) {
      const chunk = tx.range(KEY_BUCKET, start, null, SCAN_CHUNK);
      for (const { key, value } of chunk) {
        const rev = bytesToRev(key);
        this.currentRev = rev.main;
        const kv = decodeKv(value);
        const k = keyStr(kv.key);
        let ki = this.index.keyIndex(k);
        if (isTombstone(key)) {
          if (ki && !ki.isEmpty()) ki.tombstone(rev.main, rev.sub);
          keyToLease.delete(k);
          continue;
        }
        if (ki) {
          ki.put(rev.main, rev.sub);
        } else {
          ki = new KeyIndex(k);
          ki.restore({ main: kv.createRevision, sub: 0 }, rev, kv.version);
          this.index.insert(ki);
        }
        if (kv.lease !== 0n) keyToLease.set(k, kv.lease);
        else keyToLease.delete(k);
      }
      if (chunk.length < SCAN_CHUNK) break;
      start = successor(chunk[chunk.length - 1].key);
    }
    // Compaction may have removed every revision after the compaction point's keys.
    if (this.currentRev < this.compactMainRev) this.currentRev = this.compactMainRev;
    // No scheduled compaction recorded (0): nothing to resume, and a store never compacted keeps -1.
    if (scheduled !== 0 && scheduled > this.compactMainRev) {
      this.logger.info('resume scheduled compaction', { 'scheduled-compact-revision': scheduled });
      const prev = this.compactMainRev;
      this.compactMainRev = scheduled;
      void this.scheduleCompaction(scheduled, prev, this.index.compact(scheduled));
    }
    if (this.lessor) {
      for (const [k, id] of keyToLease) {
        if (this.lessor.exists(id)) this.lessor.attach(id, k);
        else this.logger.error('failed to attach a lease', { 'lease-id': id.toString(16) });
      }
    }
  }

  /** Counters and gauges for /metrics. */
  get stats(): StoreStats {
    return {
      putTotal: this.counters.put,
      deleteTotal: this.counters.delete,
      txnTotal: this.counters.txn,
      rangeTotal: this.counters.range,
      keysTotal: this.index.size,
      currentRevision: this.currentRev,
      compactRevision: this.compactMainRev,
      dbTotalSize: this.backend.size(),
      dbTotalSizeInUse: this.backend.sizeInUse(),
    };
  }
}

/** The smallest byte string greater than b. */
function successor(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.byteLength + 1);
  out.set(b);
  return out;
}

class StoreWriteTxn implements WriteTxn {
  private evs: MvccEvent[] = [];
  private counts = { puts: 0, deletes: 0, ranges: 0 };
  private ended = false;

  constructor(
    private readonly store: MvccStore,
    private readonly tx: BackendBatchTx,
    private readonly beginRev: number,
  ) {}

  rev(): number {
    return this.evs.length > 0 ? this.beginRev + 1 : this.beginRev;
  }

  changes(): readonly MvccEvent[] {
    return this.evs;
  }

  range(key: Uint8Array, end?: Uint8Array | null, opts: RangeOptions = {}): RangeResult {
    this.counts.ranges++;
    return this.store.rangeKeys(key, end, this.rev(), opts);
  }

  private readRev(r: Revision): KeyValue {
    const raw = this.tx.get(KEY_BUCKET, revToBytes(r));
    if (!raw) throw new Error(`mvcc: revision ${r.main}/${r.sub} missing from the backend`);
    return decodeKv(raw);
  }

  put(key: Uint8Array, value: Uint8Array, lease = 0n, withPrev = true): KeyValue | undefined {
    this.counts.puts++;
    const lessor = this.store.getLessor();
    if (lease !== 0n && lessor && !lessor.exists(lease)) throw new MvccError('LEASE_NOT_FOUND');
    const rev = this.beginRev + 1;
    const k = keyStr(key);
    const index = this.store.getIndex();
    // create revision and version come from the index, the lease from the lessor: the previous value is read only
    // when asked for
    const existing = index.get(k, rev);
    const prevKv = existing && withPrev ? this.readRev(existing.modified) : undefined;
    const idxRev = { main: rev, sub: this.evs.length };
    const { record, kv } = newKvRecord(key, value, existing ? existing.created.main : rev, rev, (existing?.ver ?? 0) + 1, lease);
    this.tx.putOwned(KEY_BUCKET, revToBytes(idxRev), record);
    index.put(k, idxRev);
    const ev: MvccEvent = { type: 'PUT', kv, prevKv };
    if (existing && !withPrev) ev.prevRev = existing.modified;
    this.evs.push(ev);
    if (lessor) {
      const old = lessor.leaseOf(k);
      if (old !== 0n) lessor.detach(old, k);
      if (lease !== 0n) lessor.attach(lease, k);
    }
    return prevKv;
  }

  deleteRange(key: Uint8Array, end?: Uint8Array | null): KeyValue[] {
    this.counts.deletes++;
    const k = keyStr(key);
    const e = normalizeEnd(end);
    if (e !== null && e !== undefined && e <= k) return [];
    const index = this.store.getIndex();
    const { revs } = index.revisions(k, e, this.rev());
    const deleted: KeyValue[] = [];
    const lessor = this.store.getLessor();
    const main = this.beginRev + 1;
    for (const r of revs) {
      const prevKv = this.readRev(r.rev);
      const idxRev = { main, sub: this.evs.length };
      const tomb: KeyValue = { key: prevKv.key, value: EMPTY, createRevision: 0, modRevision: main, version: 0, lease: 0n };
      this.tx.put(KEY_BUCKET, revToBytes(idxRev, true), encodeKv(tomb));
      index.tombstone(r.key, idxRev);
      this.evs.push({ type: 'DELETE', kv: tomb, prevKv });
      deleted.push(prevKv);
      if (lessor) {
        const old = lessor.leaseOf(r.key);
        if (old !== 0n) lessor.detach(old, r.key);
      }
    }
    return deleted;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.store.finishWrite(this.evs, this.counts);
  }
}

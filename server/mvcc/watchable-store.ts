// Watch on top of the MvccStore, after the reference's watchable_store: a watcher is "synced" when it has
// seen everything up to the current revision (new changes go straight to it), "unsynced" while it catches
// up from an older start revision by reading the "key" bucket in bounded chunks, or a "victim" when its
// consumer refused a response (kept and retried later). A watcher whose next revision was compacted away
// gets one response with compactRevision set and is dropped.
//
// Delivery is a callback: sink(resp) returning false means "not taken, retry later" (the consumer is slow).
// Catch-up and victim retries run from setImmediate/setTimeout when autoSync is on (the default); tests
// and deterministic callers can turn it off and call syncWatchers()/syncVictims() themselves.
import type { Backend } from '../storage/backend.js';
import type { Logger } from '../log/logger.js';
import { nopLogger } from '../log/logger.js';
import { MvccError } from './errors.js';
import { isCreateEvent, type MvccEvent } from './event.js';
import type { MvccStore } from './kvstore.js';
import { decodeKv, keyStr, normalizeEnd, type KeyValue } from './kv.js';
import { bytesToRev, isTombstone, mainRevBound } from './revision.js';
import { WatcherGroup } from './watcher-group.js';

export type WatchFilter = 'noput' | 'nodelete';

export interface WatchOptions {
  /** Include the previous kv in events. */
  prevKv?: boolean;
  /** Drop PUT ('noput') or DELETE ('nodelete') events. */
  filters?: WatchFilter[];
  /** The watcher wants periodic progress responses (sent by progressNotifyAll()). */
  progressNotify?: boolean;
  /** Watch id; default: the next free number. */
  id?: number;
  /**
   * Called each time the watcher becomes synced again (caught up from an older revision, or a refused
   * response finally taken): a stream holding back a progress notification until all its watchers are
   * synced re-checks then.
   */
  onSynced?: () => void;
}

export interface WatchResponse {
  watchId: number;
  events: MvccEvent[];
  /** The store revision this response reflects. */
  revision: number;
  /** Set (non-zero) when the watcher's start revision was compacted; the watcher is then cancelled. */
  compactRevision?: number;
}

/** Receives responses; returning false means the response was not taken and must be retried. */
export type WatchSink = (resp: WatchResponse) => boolean | void;

export type WatcherState = 'synced' | 'unsynced' | 'victim' | 'compacted' | 'canceled';

/** A registered watch. */
export interface Watcher {
  readonly id: number;
  readonly key: Uint8Array;
  readonly end: Uint8Array | undefined;
  readonly state: WatcherState;
  /** The next revision this watcher will receive. */
  readonly minRev: number;
  cancel(): void;
  /** Sends a progress response (no events, current revision) if synced; returns whether it did. */
  requestProgress(): boolean;
}

export interface WatchableStoreOptions {
  /** Schedule catch-up and victim retries automatically (default true). */
  autoSync?: boolean;
  /** Key-bucket entries read per catch-up pass (default 1000). */
  chunkSize?: number;
  /** Unsynced watchers served per pass (default 512, as the reference). */
  maxWatchersPerSync?: number;
  /** Delay before retrying victims (default 10 ms). */
  victimRetryMs?: number;
  logger?: Logger;
}

export interface WatchStats {
  watchers: number;
  synced: number;
  unsynced: number;
  victims: number;
  pendingEvents: number;
}

class WatcherImpl implements Watcher {
  state: WatcherState;
  pending: WatchResponse | undefined;
  readonly keyStr: string;
  readonly endStr: string | null | undefined;

  constructor(
    private readonly owner: WatchableStore,
    readonly id: number,
    readonly key: Uint8Array,
    readonly end: Uint8Array | undefined,
    public minRev: number,
    readonly opts: WatchOptions,
    readonly sink: WatchSink,
    state: WatcherState,
  ) {
    this.state = state;
    this.keyStr = keyStr(key);
    this.endStr = normalizeEnd(end);
  }

  cancel(): void {
    this.owner.cancel(this);
  }

  requestProgress(): boolean {
    return this.owner.requestProgress(this);
  }

  /** Filters and shapes a response for this watcher, then offers it; false: not taken. */
  send(resp: WatchResponse): boolean {
    const progress = resp.events.length === 0;
    const noPut = this.opts.filters?.includes('noput');
    const noDelete = this.opts.filters?.includes('nodelete');
    const events: MvccEvent[] = [];
    for (const ev of resp.events) {
      if ((noPut && ev.type === 'PUT') || (noDelete && ev.type === 'DELETE')) continue;
      events.push(this.opts.prevKv && ev.prevKv ? { type: ev.type, kv: ev.kv, prevKv: ev.prevKv } : { type: ev.type, kv: ev.kv });
    }
    // Everything filtered out: nothing to say.
    if (!progress && events.length === 0 && !resp.compactRevision) return true;
    try {
      return this.sink({ ...resp, watchId: this.id, events }) !== false;
    } catch (err) {
      // A failing consumer must not break the write path: drop the watcher instead.
      this.owner.sinkFailed(this, err as Error);
      return true;
    }
  }
}

/** Watches over an MvccStore. */
export class WatchableStore {
  private synced = new WatcherGroup<WatcherImpl>();
  private unsynced = new WatcherGroup<WatcherImpl>();
  private victims = new Set<WatcherImpl>();
  private nextId = 0;
  private syncScheduled = false;
  private victimTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly autoSync: boolean;
  private readonly chunkSize: number;
  private readonly maxPerSync: number;
  private readonly victimRetryMs: number;
  private readonly logger: Logger;

  constructor(
    readonly store: MvccStore,
    opts: WatchableStoreOptions = {},
  ) {
    this.autoSync = opts.autoSync ?? true;
    this.chunkSize = opts.chunkSize ?? 1000;
    this.maxPerSync = opts.maxWatchersPerSync ?? 512;
    this.victimRetryMs = opts.victimRetryMs ?? 10;
    this.logger = opts.logger ?? nopLogger;
    store.onChanges((rev, evs) => this.notify(rev, evs));
  }

  /**
   * Watches [key, end) (end empty: the key only; "\0": every key >= key) from startRev (0: from the next
   * revision). Responses go to sink.
   */
  watch(key: Uint8Array, end: Uint8Array | undefined, startRev: number, opts: WatchOptions, sink: WatchSink): Watcher {
    const endStr = normalizeEnd(end);
    if (typeof endStr === 'string' && endStr <= keyStr(key)) throw new MvccError('EMPTY_WATCHER_RANGE');
    const id = opts.id ?? this.nextId++;
    if (opts.id !== undefined && opts.id >= this.nextId) this.nextId = opts.id + 1;
    const cur = this.store.rev();
    const synced = startRev === 0 || startRev > cur;
    const minRev = synced ? Math.max(cur + 1, startRev) : startRev;
    const w = new WatcherImpl(
      this,
      id,
      Uint8Array.from(key),
      end && end.byteLength > 0 ? Uint8Array.from(end) : undefined,
      minRev,
      { ...opts },
      sink,
      synced ? 'synced' : 'unsynced',
    );
    if (synced) this.synced.add(w);
    else {
      this.unsynced.add(w);
      this.scheduleSync();
    }
    return w;
  }

  /** Removes a watcher; no more responses are sent to it. */
  cancel(w: Watcher): void {
    const wi = w as WatcherImpl;
    this.synced.delete(wi);
    this.unsynced.delete(wi);
    this.victims.delete(wi);
    wi.pending = undefined;
    if (wi.state !== 'compacted') wi.state = 'canceled';
  }

  /** @internal a sink threw: log and cancel its watcher. */
  sinkFailed(w: WatcherImpl, err: Error): void {
    this.logger.warn('watch consumer failed; cancelling watcher', { 'watch-id': w.id, error: err.message });
    queueMicrotask(() => this.cancel(w));
  }

  /** Sends a progress response to a synced watcher; returns whether it did. */
  requestProgress(w: Watcher): boolean {
    const wi = w as WatcherImpl;
    if (wi.state !== 'synced') return false;
    return wi.send({ watchId: wi.id, events: [], revision: this.store.rev() });
  }

  /**
   * Whether every one of `watchers` has been handed every event up to the current revision (all synced),
   * the condition under which the reference answers a stream's progress request. Returns that revision,
   * or undefined while any watcher is still catching up or holds a refused response.
   */
  progressRevisionIfSynced(watchers: Iterable<Watcher>): number | undefined {
    for (const w of watchers) {
      // A cancelled or compacted watcher gets nothing more: it cannot hold the notification back.
      if (w.state === 'canceled' || w.state === 'compacted') continue;
      if (w.state !== 'synced') return undefined;
    }
    return this.store.rev();
  }

  /** Sends a progress response to every synced watcher that asked for progress notifications. */
  progressNotifyAll(): void {
    const rev = this.store.rev();
    for (const w of this.synced.watchers) {
      if (w.opts.progressNotify) w.send({ watchId: w.id, events: [], revision: rev });
    }
  }

  /** Called by the store after each write txn with changes. */
  private notify(rev: number, evs: MvccEvent[]): void {
    if (this.synced.size === 0) return;
    const batches = new Map<WatcherImpl, MvccEvent[]>();
    for (const ev of evs) {
      for (const w of this.synced.watchersFor(keyStr(ev.kv.key))) {
        if (ev.kv.modRevision < w.minRev) continue;
        if (w.opts.prevKv && ev.prevRev) this.store.prevKvOf(ev);
        let b = batches.get(w);
        if (!b) {
          b = [];
          batches.set(w, b);
        }
        b.push(ev);
      }
    }
    for (const [w, b] of batches) {
      const resp = { watchId: w.id, events: b, revision: rev };
      w.minRev = rev + 1;
      if (!w.send(resp) && w.state === 'synced') this.makeVictim(w, this.synced, resp);
    }
  }

  private makeVictim(w: WatcherImpl, from: WatcherGroup<WatcherImpl>, resp: WatchResponse): void {
    from.delete(w);
    w.state = 'victim';
    w.pending = resp;
    this.victims.add(w);
    this.scheduleVictims();
  }

  private scheduleSync(): void {
    if (!this.autoSync || this.syncScheduled || this.closed) return;
    this.syncScheduled = true;
    setImmediate(() => {
      this.syncScheduled = false;
      if (this.closed) return;
      if (this.syncWatchers() > 0) this.scheduleSync();
    });
  }

  private scheduleVictims(): void {
    if (!this.autoSync || this.victimTimer || this.closed) return;
    this.victimTimer = setTimeout(() => {
      this.victimTimer = undefined;
      if (this.closed) return;
      this.syncVictims();
      if (this.victims.size > 0) this.scheduleVictims();
    }, this.victimRetryMs);
    this.victimTimer.unref();
  }

  /** Retries the victims' pending responses; those delivered rejoin the synced or unsynced group. */
  syncVictims(): void {
    const cur = this.store.rev();
    for (const w of [...this.victims]) {
      if (!w.pending || !w.send(w.pending)) continue;
      w.pending = undefined;
      if (w.state !== 'victim') continue; // cancelled by its consumer meanwhile
      this.victims.delete(w);
      if (w.minRev <= cur) {
        w.state = 'unsynced';
        this.unsynced.add(w);
      } else {
        w.state = 'synced';
        this.synced.add(w);
        w.opts.onSynced?.();
      }
    }
    if (this.unsynced.size > 0) this.scheduleSync();
  }

  /**
   * One catch-up pass: reads at most chunkSize entries of history for up to maxWatchersPerSync unsynced
   * watchers and sends them; watchers that reach the current revision become synced. Returns the number
   * of watchers still unsynced.
   */
  syncWatchers(): number {
    if (this.unsynced.size === 0) return 0;
    const curRev = this.store.rev();
    const compactRev = this.store.compactRev();
    const chosen = new WatcherGroup<WatcherImpl>();
    let minRev = Number.MAX_SAFE_INTEGER;
    for (const w of [...this.unsynced.watchers]) {
      if (chosen.size >= this.maxPerSync) break;
      if (w.minRev < compactRev) {
        this.unsynced.delete(w);
        w.state = 'compacted';
        w.send({ watchId: w.id, events: [], revision: curRev, compactRevision: compactRev });
        continue;
      }
      chosen.add(w);
      if (w.minRev < minRev) minRev = w.minRev;
    }
    if (chosen.size === 0) return this.unsynced.size;

    let chunkEnd = curRev;
    const batches = new Map<WatcherImpl, MvccEvent[]>();
    if (minRev <= curRev) {
      const tx = this.store.getBackend().readTx();
      let entries = tx.range('key', mainRevBound(minRev), mainRevBound(curRev + 1), this.chunkSize);
      if (entries.length >= this.chunkSize) {
        // Never split a main revision across passes.
        const lastMain = bytesToRev(entries[entries.length - 1].key).main;
        if (bytesToRev(entries[0].key).main === lastMain) {
          entries = tx.range('key', mainRevBound(lastMain), mainRevBound(lastMain + 1), 0);
          chunkEnd = lastMain;
        } else {
          entries = entries.filter((e) => bytesToRev(e.key).main < lastMain);
          chunkEnd = lastMain - 1;
        }
      }
      const prevCache = new Map<string, KeyValue | undefined>();
      for (const { key, value } of entries) {
        const kv = decodeKv(value);
        const ks = keyStr(kv.key);
        const ws = chosen.watchersFor(ks);
        if (ws.length === 0) continue;
        const ev: MvccEvent = { type: isTombstone(key) ? 'DELETE' : 'PUT', kv };
        if (ev.type === 'DELETE') kv.modRevision = bytesToRev(key).main;
        for (const w of ws) {
          if (kv.modRevision < w.minRev) continue;
          let e = ev;
          if (w.opts.prevKv && !isCreateEvent(ev)) e = { ...ev, prevKv: this.prevOf(ev, prevCache) };
          let b = batches.get(w);
          if (!b) {
            b = [];
            batches.set(w, b);
          }
          b.push(e);
        }
      }
    }
    for (const w of chosen.watchers) {
      w.minRev = Math.max(w.minRev, chunkEnd + 1);
      const caughtUp = chunkEnd >= curRev;
      const b = batches.get(w);
      if (b && b.length > 0) {
        const resp = { watchId: w.id, events: b, revision: curRev };
        const taken = w.send(resp);
        if (w.state !== 'unsynced') continue; // cancelled by its consumer meanwhile
        if (!taken) {
          this.makeVictim(w, this.unsynced, resp);
          continue;
        }
      }
      if (caughtUp) {
        this.unsynced.delete(w);
        w.state = 'synced';
        this.synced.add(w);
        w.opts.onSynced?.();
      }
    }
    return this.unsynced.size;
  }

  /** The key's state just before the event (undefined if unknown or compacted). */
  private prevOf(ev: MvccEvent, cache: Map<string, KeyValue | undefined>): KeyValue | undefined {
    const ck = `${ev.kv.modRevision}:${keyStr(ev.kv.key)}`;
    if (cache.has(ck)) return cache.get(ck);
    let prev: KeyValue | undefined;
    try {
      prev = this.store.range(ev.kv.key, undefined, { rev: ev.kv.modRevision - 1 }).kvs[0];
    } catch {
      prev = undefined;
    }
    cache.set(ck, prev);
    return prev;
  }

  /** Rebuilds the store from a (new) backend and makes every synced watcher catch up again. */
  restore(backend?: Backend): void {
    this.store.restore(backend);
    for (const w of [...this.synced.watchers]) {
      this.synced.delete(w);
      w.state = 'unsynced';
      this.unsynced.add(w);
    }
    this.scheduleSync();
  }

  get stats(): WatchStats {
    let pendingEvents = 0;
    for (const w of this.victims) pendingEvents += w.pending?.events.length ?? 0;
    return {
      watchers: this.synced.size + this.unsynced.size + this.victims.size,
      synced: this.synced.size,
      unsynced: this.unsynced.size,
      victims: this.victims.size,
      pendingEvents,
    };
  }

  /** Stops background work; watchers get nothing more. */
  close(): void {
    this.closed = true;
    if (this.victimTimer) clearTimeout(this.victimTimer);
  }
}

// The Election (v3electionpb) and Lock (v3lockpb) services. Like the reference, they are recipes on top of the
// ordinary KV, lease and watch API, run inside the member against its own handlers (with the caller's token, so
// authentication applies as for any KV request):
// - a campaigner or lock waiter owns the key `<name>/<lease id in hex>`, created with its lease;
// - the owner is the key under `<name>/` with the lowest create revision;
// - a waiter waits until every key under the prefix created before its own is deleted.
// Keys therefore stay interchangeable with clients that run the same recipe themselves (etcdctl lock/elect).
import type * as grpc from '@grpc/grpc-js';
import type { WatchableStore } from '../../mvcc/watchable-store.js';
import { Errors, ServerError, Code } from '../../core/errors.js';
import type { ElectionService, HandlerOf, LockService, UnaryLookup } from './service-methods.js';
import type { RequestMeta } from './auth-gate.js';
import { int64ToNumber, type Incoming, type Outgoing } from '../../wire/index.js';
import { eventToPb } from './watch.js';
import { tokenOf, toGrpcError, type StreamHandlers } from '../grpc.js';
import type { WatchResponse } from '../../mvcc/watchable-store.js';

/** The reference's session TTL when a request names no lease (lease 0): a lease of this many seconds is granted. */
export const DEFAULT_SESSION_TTL = 60;

// The reference's messages for these errors (returned as plain errors, so gRPC code Unknown).
const notLeader = () => new ServerError(Code.Unknown, 'election: not leader');
const noLeader = () => new ServerError(Code.Unknown, 'election: no leader');
const missingLeaderKey = () => new ServerError(Code.Unknown, '"leader" field must be provided');
const sessionExpired = () => new ServerError(Code.Unknown, 'mutex: session is expired');
const canceled = () => new ServerError(Code.Canceled, 'context canceled');

/** The first key after every key that starts with `p`. */
function prefixEnd(p: Buffer): Buffer {
  const end = Buffer.from(p);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

const bytes = (v: Uint8Array | null | undefined): Buffer => (v instanceof Uint8Array ? Buffer.from(v) : Buffer.alloc(0));

/** `<prefix><lease id as %x>`, as the reference names a session's key (ids are int64: -1 prints as "-1"). */
function ownKey(prefix: Buffer, lease: bigint): Buffer {
  const hex = lease < 0n ? `-${(-lease).toString(16)}` : lease.toString(16);
  return Buffer.concat([prefix, Buffer.from(hex)]);
}

type Header = Outgoing<'etcdserverpb.ResponseHeader'>;
type KeyValue = Outgoing<'mvccpb.KeyValue'>;
type Event = Outgoing<'mvccpb.Event'>;
/** The KV and Lease methods the recipes call. */
type RecipeMethod = 'Range' | 'Txn' | 'DeleteRange' | 'LeaseGrant';

const firstCreate = (prefix: Buffer): Incoming<'etcdserverpb.RangeRequest'> => ({ key: prefix, range_end: prefixEnd(prefix), sort_order: 'ASCEND', sort_target: 'CREATE', limit: '1' });
const createRevIs = (key: Buffer, rev: number): Incoming<'etcdserverpb.Compare'> => ({ result: 'EQUAL', target: 'CREATE', key, create_revision: String(rev) });
/** A header's revision (0 when absent). */
const revisionOf = (h: Header | null | undefined): number => int64ToNumber(h?.revision);

/**
 * The key a session's txn found in its failure branch (its first op ranges over the session's own key, which
 * exists: the compare on its create revision failed).
 */
function ownKv(res: Outgoing<'etcdserverpb.TxnResponse'>): KeyValue {
  const kv = res.responses?.[0]?.response_range?.kvs?.[0];
  if (!kv) throw new ServerError(Code.Internal, 'etcdserver: the session key vanished inside its own txn');
  return kv;
}

/** One watch response: the store revision it reflects, the revision of its last event, its events. */
interface Batch {
  revision: number;
  last: number;
  events: Event[];
}

export class ConcurrencyApi {
  constructor(
    private readonly kv: { readonly watchable: WatchableStore },
    private readonly api: UnaryLookup & { header(revision?: number): Header },
  ) {}

  /** The recipes call KV and Lease methods by name, typed by the method table. */
  private method<M extends RecipeMethod>(name: M): HandlerOf<M> {
    const h = this.api.handler(name);
    if (!h) throw new ServerError(Code.Unimplemented, `etcdserver: ${name} is not supported by this member`);
    return h;
  }

  private range(req: Incoming<'etcdserverpb.RangeRequest'>, meta?: RequestMeta) {
    return this.method('Range')(req, meta);
  }

  private txn(req: Incoming<'etcdserverpb.TxnRequest'>, meta?: RequestMeta) {
    return this.method('Txn')(req, meta);
  }

  /** The lease a session runs under: the one given, or a new one with the reference's default TTL. */
  private async sessionLease(lease: string | undefined, meta?: RequestMeta): Promise<bigint> {
    const id = BigInt(lease || 0);
    if (id !== 0n) return id;
    const res = await this.method('LeaseGrant')({ TTL: String(DEFAULT_SESSION_TTL), ID: '0' }, meta);
    return BigInt(String(res.ID ?? 0));
  }

  /** Resolves once `key` is deleted at or after `rev`. */
  private waitDelete(key: Buffer, rev: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(canceled());
      let done = false;
      let watcher: { cancel(): void } | undefined;
      const finish = (err?: Error) => {
        if (done) return;
        done = true;
        signal?.removeEventListener('abort', onAbort);
        // The sink may run inside watch() itself, before the watcher is returned.
        if (watcher) watcher.cancel();
        else queueMicrotask(() => watcher?.cancel());
        if (err) reject(err);
        else resolve();
      };
      const onAbort = () => finish(canceled());
      signal?.addEventListener('abort', onAbort);
      try {
        watcher = this.kv.watchable.watch(key, undefined, rev, {}, (wr: WatchResponse) => {
          if (wr.compactRevision) finish(Errors.compacted());
          else if (wr.events.some((e) => e.type === 'DELETE')) finish();
          return true;
        });
        if (done) watcher.cancel();
      } catch (e) {
        finish(e as Error);
      }
    });
  }

  /** Wait until no key under `prefix` has a create revision at or below `maxCreateRev`; resolves with the last header. */
  private async waitDeletes(prefix: Buffer, maxCreateRev: number, meta?: RequestMeta): Promise<Header | null | undefined> {
    for (;;) {
      const res = await this.range({ key: prefix, range_end: prefixEnd(prefix), sort_order: 'DESCEND', sort_target: 'CREATE', limit: '1', max_create_revision: String(maxCreateRev) }, meta);
      const kvs = res.kvs ?? [];
      if (kvs.length === 0) return res.header;
      await this.waitDelete(bytes(kvs[0].key), revisionOf(res.header), meta?.signal);
    }
  }

  // ----------------------------------------------------------------------------------------------- Election

  Campaign = async (req: Incoming<'v3electionpb.CampaignRequest'>, meta?: RequestMeta): Promise<Outgoing<'v3electionpb.CampaignResponse'>> => {
    const name = bytes(req.name);
    const value = bytes(req.value);
    const lease = await this.sessionLease(req.lease, meta);
    const prefix = Buffer.concat([name, Buffer.from('/')]);
    const key = ownKey(prefix, lease);
    const res = await this.txn({
      compare: [createRevIs(key, 0)],
      success: [{ request_put: { key, value, lease: lease.toString() } }],
      failure: [{ request_range: { key } }],
    }, meta);
    let rev = revisionOf(res.header);
    if (!res.succeeded) {
      // This lease already campaigns: resume that candidacy, with the new value.
      const kv = ownKv(res);
      rev = int64ToNumber(kv.create_revision);
      if (!bytes(kv.value).equals(value)) {
        try {
          await this.proclaim(key, rev, lease, value, meta);
        } catch (e) {
          await this.resign(key, rev, { token: meta?.token }).catch(() => undefined);
          throw e;
        }
      }
    }
    try {
      await this.waitDeletes(prefix, rev - 1, meta);
    } catch (e) {
      // A campaigner that gave up leaves the election.
      if (meta?.signal?.aborted) await this.resign(key, rev, { token: meta?.token }).catch(() => undefined);
      throw e;
    }
    return { header: res.header, leader: { name, key, rev, lease: lease.toString() } };
  };

  private async proclaim(key: Buffer, rev: number, lease: bigint, value: Buffer, meta?: RequestMeta): Promise<Header | null | undefined> {
    const res = await this.txn({ compare: [createRevIs(key, rev)], success: [{ request_put: { key, value, lease: lease.toString() } }], failure: [] }, meta);
    if (!res.succeeded) throw notLeader();
    return res.header;
  }

  private async resign(key: Buffer, rev: number, meta?: RequestMeta): Promise<Header | null | undefined> {
    const res = await this.txn({ compare: [createRevIs(key, rev)], success: [{ request_delete_range: { key } }], failure: [] }, meta);
    return res.header;
  }

  Proclaim = async (req: Incoming<'v3electionpb.ProclaimRequest'>, meta?: RequestMeta): Promise<Outgoing<'v3electionpb.ProclaimResponse'>> => {
    const l = req.leader;
    if (!l) throw missingLeaderKey();
    const header = await this.proclaim(bytes(l.key), int64ToNumber(l.rev), BigInt(l.lease || 0), bytes(req.value), meta);
    return { header };
  };

  Resign = async (req: Incoming<'v3electionpb.ResignRequest'>, meta?: RequestMeta): Promise<Outgoing<'v3electionpb.ResignResponse'>> => {
    const l = req.leader;
    if (!l) throw missingLeaderKey();
    return { header: await this.resign(bytes(l.key), int64ToNumber(l.rev), meta) };
  };

  Leader = async (req: Incoming<'v3electionpb.LeaderRequest'>, meta?: RequestMeta): Promise<Outgoing<'v3electionpb.LeaderResponse'>> => {
    const res = await this.range(firstCreate(Buffer.concat([bytes(req.name), Buffer.from('/')])), meta);
    const kvs = res.kvs ?? [];
    if (kvs.length === 0) throw noLeader();
    return { header: res.header, kv: kvs[0] };
  };

  /**
   * Observe: the current leader's value, then every value it proclaims; when its key goes, the next leader's.
   * Calls `send` in order until the signal aborts; rejects when the watch is lost (e.g. compacted).
   */
  async observe(name: Buffer, send: (msg: Outgoing<'v3electionpb.LeaderResponse'>) => Promise<void> | void, meta: RequestMeta & { signal: AbortSignal }): Promise<void> {
    const prefix = Buffer.concat([name, Buffer.from('/')]);
    const signal = meta.signal;
    while (!signal.aborted) {
      const res = await this.range(firstCreate(prefix), meta);
      const kvs = res.kvs ?? [];
      let header: Header | null | undefined;
      let kv: KeyValue;
      if (kvs.length > 0) {
        header = res.header;
        kv = kvs[0];
      } else {
        // No leader yet: the first key put under the prefix is the leader (a PUT event always carries its kv).
        const ev = await this.nextEvents(prefix, prefixEnd(prefix), revisionOf(res.header), signal, (evs) => evs.find((e) => e.type === 'PUT'));
        kv = ev.kv!;
        header = { ...this.api.header(int64ToNumber(kv.mod_revision)) };
      }
      await send({ header, kv });
      // Follow that leader's key until it is deleted.
      let from = revisionOf(header) + 1;
      for (;;) {
        const batch = await this.nextBatch(bytes(kv.key), from, signal);
        let deleted = false;
        for (const e of batch.events) {
          if (e.type === 'DELETE') {
            deleted = true;
            break;
          }
          await send({ header: this.api.header(batch.revision), kv: e.kv });
        }
        if (deleted) break;
        from = batch.last + 1;
      }
    }
  }

  /** Waits for the first event under [key, end) from `rev` that `pick` selects. */
  private async nextEvents(key: Buffer, end: Buffer, rev: number, signal: AbortSignal, pick: (evs: Event[]) => Event | undefined): Promise<Event> {
    for (;;) {
      const batch = await this.nextBatch(key, rev, signal, end);
      const ev = pick(batch.events);
      if (ev) return ev;
      rev = batch.last + 1;
    }
  }

  /** The next watch response with events on [key, end) from `rev`. */
  private nextBatch(key: Buffer, rev: number, signal: AbortSignal, end?: Buffer): Promise<Batch> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(canceled());
      let done = false;
      let watcher: { cancel(): void } | undefined;
      const finish = (err: Error | undefined, out?: Batch) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        if (watcher) watcher.cancel();
        if (err) reject(err);
        else resolve(out!);
      };
      const onAbort = () => finish(canceled());
      signal.addEventListener('abort', onAbort);
      try {
        watcher = this.kv.watchable.watch(key, end, rev, {}, (wr: WatchResponse) => {
          if (done) return true;
          if (wr.compactRevision) finish(Errors.compacted());
          else if (wr.events.length > 0) {
            // A batch may span revisions: the next watch starts after the last event it holds.
            const last = wr.events[wr.events.length - 1].kv.modRevision;
            finish(undefined, { revision: wr.revision, last, events: wr.events.map(eventToPb) });
          }
          return true;
        });
        if (done) watcher.cancel();
      } catch (e) {
        finish(e as Error);
      }
    });
  }

  // ----------------------------------------------------------------------------------------------- Lock

  Lock = async (req: Incoming<'v3lockpb.LockRequest'>, meta?: RequestMeta): Promise<Outgoing<'v3lockpb.LockResponse'>> => {
    const prefix = Buffer.concat([bytes(req.name), Buffer.from('/')]);
    const lease = await this.sessionLease(req.lease, meta);
    const key = ownKey(prefix, lease);
    const res = await this.txn({
      compare: [createRevIs(key, 0)],
      // Join the waiters (the oldest key holds the lock), or find our key when this lease already waits or holds.
      success: [{ request_put: { key, value: Buffer.alloc(0), lease: lease.toString() } }, { request_range: firstCreate(prefix) }],
      failure: [{ request_range: { key } }, { request_range: firstCreate(prefix) }],
    }, meta);
    const rev = res.succeeded ? revisionOf(res.header) : int64ToNumber(ownKv(res).create_revision);
    const owner = res.responses?.[1]?.response_range?.kvs ?? [];
    if (owner.length === 0 || int64ToNumber(owner[0].create_revision) === rev) return { header: res.header, key };
    try {
      await this.waitDeletes(prefix, rev - 1, meta);
    } catch (e) {
      await this.method('DeleteRange')({ key }, { token: meta?.token }).catch(() => undefined);
      throw e;
    }
    // The key is gone if the lease expired while waiting: then the lock was not acquired.
    const own = await this.range({ key }, meta);
    if ((own.kvs ?? []).length === 0) throw sessionExpired();
    return { header: own.header, key };
  };

  Unlock = async (req: Incoming<'v3lockpb.UnlockRequest'>, meta?: RequestMeta): Promise<Outgoing<'v3lockpb.UnlockResponse'>> => {
    const res = await this.method('DeleteRange')({ key: bytes(req.key) }, meta);
    return { header: res.header };
  };

  /** The unary handlers of both services (checked against the service definitions). */
  handlers(): ElectionService & LockService {
    const { Campaign, Proclaim, Resign, Leader, Lock, Unlock } = this;
    return { Campaign, Proclaim, Resign, Leader, Lock, Unlock };
  }

  /** Election/Observe as a gRPC server stream. */
  observeStream(): StreamHandlers {
    const observe = (call: grpc.ServerWritableStream<Incoming<'v3electionpb.LeaderRequest'>, Outgoing<'v3electionpb.LeaderResponse'>>) => {
      const ac = new AbortController();
      call.on('cancelled', () => ac.abort());
      call.on('close', () => ac.abort());
      const write = (msg: Outgoing<'v3electionpb.LeaderResponse'>) =>
        new Promise<void>((resolve) => {
          if (call.write(msg)) resolve();
          else call.once('drain', () => resolve());
        });
      this.observe(bytes(call.request.name), write, { token: tokenOf(call.metadata), signal: ac.signal }).then(
        () => call.end(),
        (e) => {
          if (!ac.signal.aborted) call.emit('error', toGrpcError(e));
        },
      );
    };
    return { Observe: observe as grpc.UntypedHandleCall };
  }
}

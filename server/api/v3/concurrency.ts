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
import type { ElectionService, LockService, UnaryLookup } from './service-methods.js';
import type { UnaryMethod } from '../../wire/index.js';
import type { RequestMeta } from './auth-gate.js';
import type { Pb } from './convert.js';
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

const bytes = (v: unknown): Buffer => (v instanceof Uint8Array ? Buffer.from(v) : Buffer.alloc(0));

/** `<prefix><lease id as %x>`, as the reference names a session's key (ids are int64: -1 prints as "-1"). */
function ownKey(prefix: Buffer, lease: bigint): Buffer {
  const hex = lease < 0n ? `-${(-lease).toString(16)}` : lease.toString(16);
  return Buffer.concat([prefix, Buffer.from(hex)]);
}

const firstCreate = (prefix: Buffer): Pb => ({ key: prefix, range_end: prefixEnd(prefix), sort_order: 'ASCEND', sort_target: 'CREATE', limit: 1 });
const createRevIs = (key: Buffer, rev: number): Pb => ({ result: 'EQUAL', target: 'CREATE', key, create_revision: rev });

/** One watch response: the store revision it reflects, the revision of its last event, its events. */
interface Batch {
  revision: number;
  last: number;
  events: Pb[];
}

export class ConcurrencyApi {
  constructor(
    private readonly kv: { readonly watchable: WatchableStore },
    private readonly api: UnaryLookup & { header(revision?: number): Pb },
  ) {}

  /** The recipes call KV and Lease methods by name; the type rejects a name those services do not have. */
  private call(name: UnaryMethod<'etcdserverpb.KV'> | UnaryMethod<'etcdserverpb.Lease'>, req: Pb, meta?: RequestMeta): Promise<Pb> {
    const h = this.api.handler(name);
    if (!h) throw new ServerError(Code.Unimplemented, `etcdserver: ${name} is not supported by this member`);
    return h(req, meta);
  }

  /** The lease a session runs under: the one given, or a new one with the reference's default TTL. */
  private async sessionLease(lease: unknown, meta?: RequestMeta): Promise<bigint> {
    const id = BigInt((lease as string | number | undefined) ?? 0);
    if (id !== 0n) return id;
    const res = await this.call('LeaseGrant', { TTL: DEFAULT_SESSION_TTL, ID: 0 }, meta);
    return BigInt(res.ID);
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
  private async waitDeletes(prefix: Buffer, maxCreateRev: number, meta?: RequestMeta): Promise<Pb> {
    for (;;) {
      const res = await this.call('Range', { key: prefix, range_end: prefixEnd(prefix), sort_order: 'DESCEND', sort_target: 'CREATE', limit: 1, max_create_revision: maxCreateRev }, meta);
      if (res.kvs.length === 0) return res.header;
      await this.waitDelete(Buffer.from(res.kvs[0].key), Number(res.header.revision), meta?.signal);
    }
  }

  // ----------------------------------------------------------------------------------------------- Election

  Campaign = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const name = bytes(req.name);
    const value = bytes(req.value);
    const lease = await this.sessionLease(req.lease, meta);
    const prefix = Buffer.concat([name, Buffer.from('/')]);
    const key = ownKey(prefix, lease);
    const res = await this.call('Txn', {
      compare: [createRevIs(key, 0)],
      success: [{ request_put: { key, value, lease: lease.toString() } }],
      failure: [{ request_range: { key } }],
    }, meta);
    let rev = Number(res.header.revision);
    if (!res.succeeded) {
      // This lease already campaigns: resume that candidacy, with the new value.
      const kv = res.responses[0].response_range.kvs[0];
      rev = Number(kv.create_revision);
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

  private async proclaim(key: Buffer, rev: number, lease: bigint, value: Buffer, meta?: RequestMeta): Promise<Pb> {
    const res = await this.call('Txn', { compare: [createRevIs(key, rev)], success: [{ request_put: { key, value, lease: lease.toString() } }], failure: [] }, meta);
    if (!res.succeeded) throw notLeader();
    return res.header;
  }

  private async resign(key: Buffer, rev: number, meta?: RequestMeta): Promise<Pb> {
    const res = await this.call('Txn', { compare: [createRevIs(key, rev)], success: [{ request_delete_range: { key } }], failure: [] }, meta);
    return res.header;
  }

  Proclaim = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const l = req.leader;
    if (!l) throw missingLeaderKey();
    const header = await this.proclaim(bytes(l.key), Number(l.rev), BigInt(l.lease ?? 0), bytes(req.value), meta);
    return { header };
  };

  Resign = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const l = req.leader;
    if (!l) throw missingLeaderKey();
    return { header: await this.resign(bytes(l.key), Number(l.rev), meta) };
  };

  Leader = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const res = await this.call('Range', firstCreate(Buffer.concat([bytes(req.name), Buffer.from('/')])), meta);
    if (res.kvs.length === 0) throw noLeader();
    return { header: res.header, kv: res.kvs[0] };
  };

  /**
   * Observe: the current leader's value, then every value it proclaims; when its key goes, the next leader's.
   * Calls `send` in order until the signal aborts; rejects when the watch is lost (e.g. compacted).
   */
  async observe(name: Buffer, send: (msg: Pb) => Promise<void> | void, meta: RequestMeta & { signal: AbortSignal }): Promise<void> {
    const prefix = Buffer.concat([name, Buffer.from('/')]);
    const signal = meta.signal;
    while (!signal.aborted) {
      const res = await this.call('Range', firstCreate(prefix), meta);
      let header: Pb;
      let kv: Pb;
      if (res.kvs.length > 0) {
        header = res.header;
        kv = res.kvs[0];
      } else {
        // No leader yet: the first key put under the prefix is the leader.
        const ev = await this.nextEvents(prefix, prefixEnd(prefix), Number(res.header.revision), signal, (evs) => evs.find((e) => e.type === 'PUT'));
        kv = ev.kv;
        header = { ...this.api.header(Number(kv.mod_revision)) };
      }
      await send({ header, kv });
      // Follow that leader's key until it is deleted.
      let from = Number(header.revision) + 1;
      for (;;) {
        const batch = await this.nextBatch(Buffer.from(kv.key), from, signal);
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
  private async nextEvents(key: Buffer, end: Buffer, rev: number, signal: AbortSignal, pick: (evs: Pb[]) => Pb | undefined): Promise<Pb> {
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

  Lock = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const prefix = Buffer.concat([bytes(req.name), Buffer.from('/')]);
    const lease = await this.sessionLease(req.lease, meta);
    const key = ownKey(prefix, lease);
    const res = await this.call('Txn', {
      compare: [createRevIs(key, 0)],
      // Join the waiters (the oldest key holds the lock), or find our key when this lease already waits or holds.
      success: [{ request_put: { key, value: Buffer.alloc(0), lease: lease.toString() } }, { request_range: firstCreate(prefix) }],
      failure: [{ request_range: { key } }, { request_range: firstCreate(prefix) }],
    }, meta);
    const rev = res.succeeded ? Number(res.header.revision) : Number(res.responses[0].response_range.kvs[0].create_revision);
    const owner = res.responses[1].response_range.kvs;
    if (owner.length === 0 || Number(owner[0].create_revision) === rev) return { header: res.header, key };
    try {
      await this.waitDeletes(prefix, rev - 1, meta);
    } catch (e) {
      await this.call('DeleteRange', { key }, { token: meta?.token }).catch(() => undefined);
      throw e;
    }
    // The key is gone if the lease expired while waiting: then the lock was not acquired.
    const own = await this.call('Range', { key }, meta);
    if (own.kvs.length === 0) throw sessionExpired();
    return { header: own.header, key };
  };

  Unlock = async (req: Pb, meta?: RequestMeta): Promise<Pb> => {
    const res = await this.call('DeleteRange', { key: bytes(req.key) }, meta);
    return { header: res.header };
  };

  /** The unary handlers of both services (checked against the service definitions). */
  handlers(): ElectionService & LockService {
    const { Campaign, Proclaim, Resign, Leader, Lock, Unlock } = this;
    return { Campaign, Proclaim, Resign, Leader, Lock, Unlock };
  }

  /** Election/Observe as a gRPC server stream. */
  observeStream(): StreamHandlers {
    const observe = (call: grpc.ServerWritableStream<Pb, Pb>) => {
      const ac = new AbortController();
      call.on('cancelled', () => ac.abort());
      call.on('close', () => ac.abort());
      const write = (msg: Pb) =>
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

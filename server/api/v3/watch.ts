// Watch/Watch: one bidirectional stream carries many watchers. Watch ids are per stream (the client may pick
// them); the store's own watcher ids stay internal.
import type * as grpc from '@grpc/grpc-js';
import type { StreamCore } from '../../core/interfaces.js';
import type { AuthGate } from './auth-gate.js';
import { kvToPb } from './convert.js';
import type { Incoming, Outgoing } from '../../wire/index.js';
import { requestMetaOf } from '../grpc.js';
import type { Watcher, WatchResponse } from '../../mvcc/watchable-store.js';
import type { MvccEvent } from '../../mvcc/event.js';

/** How often watchers that asked for progress notifications get one (the reference: 10 minutes). */
export const PROGRESS_NOTIFY_MS = 10 * 60 * 1000;

const EMPTY = Buffer.alloc(0);

/** A store event in the wire's mvccpb.Event shape. */
export function eventToPb(ev: MvccEvent): Outgoing<'mvccpb.Event'> {
  const out: Outgoing<'mvccpb.Event'> = { type: ev.type, kv: kvToPb(ev.kv) };
  if (ev.prevKv) out.prev_kv = kvToPb(ev.prevKv);
  return out;
}

export function watchHandler(server: StreamCore, api: { readonly gate: AuthGate; header(revision?: number): Outgoing<'etcdserverpb.ResponseHeader'> }): grpc.handleBidiStreamingCall<Incoming<'etcdserverpb.WatchRequest'>, Outgoing<'etcdserverpb.WatchResponse'>> {
  return (call) => {
    const meta = requestMetaOf(call);
    const watchers = new Map<number, Watcher>();
    let nextId = 0;
    let closed = false;
    const send = (msg: Outgoing<'etcdserverpb.WatchResponse'>) => {
      if (!closed) call.write(msg);
    };
    const progressTimer = setInterval(() => {
      for (const [id, w] of watchers) if (progressWanted.has(id)) w.requestProgress();
    }, server.opts.watchProgressNotifyMs && server.opts.watchProgressNotifyMs > 0 ? server.opts.watchProgressNotifyMs : PROGRESS_NOTIFY_MS);
    progressTimer.unref();
    const progressWanted = new Set<number>();

    // A progress notification promises the client that every watcher on this stream has been sent every
    // event up to its revision, so (as the reference) it is held back while any watcher is still catching
    // up or holds a response the client has not taken, and sent as soon as all of them are synced.
    let progressDeferred = false;
    const tryProgress = (): boolean => {
      const rev = server.kv.watchable.progressRevisionIfSynced(watchers.values());
      if (rev === undefined) return false;
      send({ header: api.header(rev), watch_id: -1 });
      return true;
    };
    const retryDeferredProgress = () => {
      if (progressDeferred && tryProgress()) progressDeferred = false;
    };

    const create = (r: Incoming<'etcdserverpb.WatchCreateRequest'>) => {
      let id = Number(r.watch_id ?? 0);
      if (id === 0 || id === -1) {
        while (watchers.has(nextId)) nextId++;
        id = nextId++;
      } else if (watchers.has(id)) {
        send({ header: api.header(), watch_id: id, created: true, canceled: true, cancel_reason: 'etcdserver: duplicate watch ID provided on the WatchStream' });
        return;
      }
      const key = r.key ?? EMPTY;
      const end = r.range_end ?? EMPTY;
      try {
        api.gate.requireKeys(meta, key, end, false);
      } catch (e) {
        send({ header: api.header(), watch_id: id, created: true, canceled: true, cancel_reason: (e as Error).message });
        return;
      }
      const filters = (r.filters ?? []).map((f) => (f === 'NOPUT' ? 'noput' : 'nodelete') as 'noput' | 'nodelete');
      // The created response goes first; events may follow immediately.
      send({ header: api.header(), watch_id: id, created: true });
      try {
        const w = server.kv.watchable.watch(key, end.length > 0 ? end : undefined, Number(r.start_revision ?? 0), { prevKv: !!r.prev_kv, filters, progressNotify: !!r.progress_notify, onSynced: retryDeferredProgress }, (resp: WatchResponse) => {
          if (resp.compactRevision) {
            send({ header: api.header(resp.revision), watch_id: id, canceled: true, compact_revision: resp.compactRevision, cancel_reason: 'etcdserver: mvcc: required revision has been compacted' });
            watchers.delete(id);
            queueMicrotask(retryDeferredProgress);
            return true;
          }
          // A client that does not keep up is not buffered without bound: the store keeps the response and
          // offers it again later.
          if (call.writableNeedDrain) return false;
          send({ header: api.header(resp.revision), watch_id: id, events: resp.events.map(eventToPb) });
          return true;
        });
        watchers.set(id, w);
        if (r.progress_notify) progressWanted.add(id);
      } catch (e) {
        send({ header: api.header(), watch_id: id, canceled: true, cancel_reason: (e as Error).message });
      }
    };

    call.on('data', (req: Incoming<'etcdserverpb.WatchRequest'>) => {
      if (req.create_request) create(req.create_request);
      else if (req.cancel_request) {
        const id = Number(req.cancel_request.watch_id ?? 0);
        const w = watchers.get(id);
        if (w) {
          w.cancel();
          watchers.delete(id);
          progressWanted.delete(id);
          send({ header: api.header(), watch_id: id, canceled: true });
          retryDeferredProgress();
        }
      } else if (req.progress_request) {
        // One pending notification answers every request made while it waits (as the reference).
        if (!progressDeferred && !tryProgress()) progressDeferred = true;
      }
    });
    const cleanup = () => {
      if (closed) return;
      closed = true;
      clearInterval(progressTimer);
      for (const w of watchers.values()) w.cancel();
      watchers.clear();
    };
    call.on('end', () => {
      cleanup();
      call.end();
    });
    call.on('error', cleanup);
    call.on('cancelled', cleanup);
  };
}

// The streaming calls of the v3 API: Maintenance.Snapshot (the db in the reference's bbolt format in 32 KiB chunks, then its sha256, as the
// reference's clients expect) and Lease.LeaseKeepAlive. Watch lives in watch.ts.
import { createHash } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { StreamCore } from '../../core/interfaces.js';
import type { V3Api } from './handlers.js';
import type { Incoming, Outgoing } from '../../wire/index.js';
import { requestMetaOf, toGrpcError, type StreamHandlers } from '../grpc.js';
import { Errors } from '../../core/errors.js';
import { watchHandler } from './watch.js';
import { openBoltSnapshot } from '../../cluster/bolt-snapshot.js';

export const SNAPSHOT_CHUNK = 32 * 1024;

/** Stream a consistent copy of the db; the last message's blob is the sha256 of everything sent before. */
export async function streamSnapshot(server: StreamCore, api: V3Api, write: (msg: Outgoing<'etcdserverpb.SnapshotResponse'>) => Promise<void> | void): Promise<void> {
  server.kv.forceCommit();
  // the reference's format (a bbolt file), so its tools can read and restore what svc saves
  const snap = await openBoltSnapshot(
    server.backend,
    {
      members: server.membership.list(),
      removed: [...server.membership.removed],
      alarms: [...server.alarms],
      metaTerm: server.opts.release.metaTermKey,
    },
    SNAPSHOT_CHUNK,
  );
  server.logger.info('sending database snapshot to client', { 'total-bytes': snap.size });
  const hash = createHash('sha256');
  let remaining = snap.size;
  try {
    for await (const chunk of snap.chunks) {
      hash.update(chunk);
      remaining -= chunk.length;
      await write({ header: api.header(), remaining_bytes: remaining, blob: Buffer.from(chunk) });
    }
  } finally {
    snap.close();
  }
  await write({ header: api.header(), remaining_bytes: 0, blob: hash.digest() });
  server.logger.info('sent database snapshot to client', { 'total-bytes': snap.size });
}

export function streamHandlers(server: StreamCore, api: V3Api): Record<string, StreamHandlers> {
  const snapshot = (call: grpc.ServerWritableStream<Incoming<'etcdserverpb.SnapshotRequest'>, Outgoing<'etcdserverpb.SnapshotResponse'>>) => {
    try {
      api.gate.requireAdmin(requestMetaOf(call));
    } catch (e) {
      call.emit('error', toGrpcError(e));
      return;
    }
    const write = (msg: Outgoing<'etcdserverpb.SnapshotResponse'>) =>
      new Promise<void>((resolve) => {
        if (call.write(msg)) resolve();
        else call.once('drain', resolve);
      });
    streamSnapshot(server, api, write).then(
      () => call.end(),
      (e) => call.emit('error', toGrpcError(e)),
    );
  };

  const keepAlive = (call: grpc.ServerDuplexStream<Incoming<'etcdserverpb.LeaseKeepAliveRequest'>, Outgoing<'etcdserverpb.LeaseKeepAliveResponse'>>) => {
    call.on('data', (req: Incoming<'etcdserverpb.LeaseKeepAliveRequest'>) => {
      const id = BigInt(req.ID ?? 0);
      server.renewLease(id).then(
        (ttl) => call.write({ header: api.header(), ID: id.toString(), TTL: ttl }),
        (e) => {
          if ((e as Error).message === Errors.leaseNotFound().message) {
            call.write({ header: api.header(), ID: id.toString(), TTL: 0 });
          } else {
            call.emit('error', toGrpcError(e));
          }
        },
      );
    });
    call.on('end', () => call.end());
    call.on('error', () => undefined);
  };

  // A learner serves no stream but the snapshot, as the reference.
  const notForLearner = (h: grpc.UntypedHandleCall): grpc.UntypedHandleCall =>
    ((call: grpc.ServerWritableStream<object, object>) => {
      if (server.isLearner()) call.emit('error', toGrpcError(Errors.notSupportedForLearner()));
      else (h as (c: typeof call) => void)(call);
    }) as grpc.UntypedHandleCall;
  const observe = api.concurrency.observeStream();
  return {
    maintenance: { Snapshot: snapshot as grpc.UntypedHandleCall },
    lease: { LeaseKeepAlive: notForLearner(keepAlive as grpc.UntypedHandleCall) },
    watch: { Watch: notForLearner(watchHandler(server, api) as grpc.UntypedHandleCall) },
    election: Object.fromEntries(Object.entries(observe).map(([k, h]) => [k, h && notForLearner(h)])),
  };
}

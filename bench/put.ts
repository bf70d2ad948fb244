// Put load generator over etcd's gRPC KV API: N puts in flight at once, spread over a few HTTP/2
// connections, each put a 256-byte value to one of ~10k keys, latency measured per request on the
// client. The same code drives svc and the reference, so the two figures are comparable.
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { LoadError, runKvLoad, type KvLoadOptions, type LoadResult } from './lib/load.js';

export interface PutLoadOptions extends KvLoadOptions {
  /** Distinct keys. Default 10000. */
  keys?: number;
  /** Value size in bytes. Default 256. */
  valueBytes?: number;
}

export type PutLoadResult = LoadResult;
/** Raised when the load cannot run at all (no connection, every put failing). */
export const PutLoadError = LoadError;

type Unary = (req: object, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, res?: unknown) => void) => void;

/** Runs a warm-up, then a measured window of puts; resolves with throughput and latency figures. */
export async function runPutLoad(opts: PutLoadOptions): Promise<PutLoadResult> {
  const nkeys = opts.keys ?? 10000;
  const value = randomBytes(opts.valueBytes ?? 256);
  const keys = Array.from({ length: nkeys }, (_, i) => Buffer.from(`/bench/put/${String(i).padStart(8, '0')}`));
  return runKvLoad(opts, keys, (c, key, callOpts, cb) => (c as unknown as { Put: Unary }).Put({ key, value }, new grpc.Metadata(), callOpts, (e) => cb(e)));
}

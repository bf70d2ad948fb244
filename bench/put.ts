// Put load generator over etcd's gRPC KV API: N puts in flight at once, spread over a few HTTP/2
// connections, each put a 256-byte value to one of ~10k keys, latency measured per request on the
// client. The same code drives svc and the reference, so the two figures are comparable.
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../server/wire/index.js';
import { closedLoop, connectClients, LoadError, type LoadOp, type LoadResult } from './lib/load.js';

export interface PutLoadOptions {
  /** gRPC targets (host:port); connections are spread over them round-robin. */
  endpoints: readonly string[];
  /** Puts in flight at once. */
  concurrency: number;
  /** HTTP/2 connections (each its own TCP connection). Default min(concurrency, 8). */
  connections?: number;
  /** Distinct keys. Default 10000. */
  keys?: number;
  /** Value size in bytes. Default 256. */
  valueBytes?: number;
  /** Unmeasured warm-up before the measured run. Default 1500 ms. */
  warmupMs?: number;
  /** Length of the measured run. Default 8000 ms. */
  durationMs?: number;
  /** Per-request deadline. Default 10 s. */
  requestTimeoutMs?: number;
}

export type PutLoadResult = LoadResult;
/** Raised when the load cannot run at all (no connection, every put failing). */
export const PutLoadError = LoadError;

type Unary = (req: object, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, res?: unknown) => void) => void;

/** Runs a warm-up, then a measured window of puts; resolves with throughput and latency figures. */
export async function runPutLoad(opts: PutLoadOptions): Promise<PutLoadResult> {
  const nkeys = opts.keys ?? 10000;
  const timeout = opts.requestTimeoutMs ?? 10000;
  const value = randomBytes(opts.valueBytes ?? 256);
  const keys = Array.from({ length: nkeys }, (_, i) => Buffer.from(`/bench/put/${String(i).padStart(8, '0')}`));
  const { KV } = loadClients();
  const clients = await connectClients(KV, opts.endpoints, opts.connections ?? Math.min(opts.concurrency, 8));
  try {
    let next = Math.floor(Math.random() * keys.length);
    const op: LoadOp = (worker, cb) => {
      const key = keys[next];
      next = next + 1 === keys.length ? 0 : next + 1;
      const c = clients[worker % clients.length] as unknown as { Put: Unary };
      c.Put({ key, value }, new grpc.Metadata(), { deadline: Date.now() + timeout }, (e) => cb(e));
    };
    await closedLoop(op, opts.concurrency, opts.warmupMs ?? 1500, false);
    return await closedLoop(op, opts.concurrency, opts.durationMs ?? 8000, true);
  } finally {
    for (const c of clients) c.close();
  }
}

// The closed loop every Node load generator of the bench shares: N requests in flight for a fixed time, latency
// measured per request on the client (call to callback), nearest-rank p50/p99 over the measured window. The put and
// range benches differ only in the request they issue, so their figures are comparable.
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../server/wire/index.js';
import { quantile } from './stats.js';

/** Throughput and latency of one measured window. */
export interface LoadResult {
  /** Successful requests in the measured window. */
  ops: number;
  errors: number;
  /** The first error message seen, if any. */
  firstError?: string;
  seconds: number;
  opsPerSec: number;
  /** Latency quantiles in milliseconds. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Raised when the load cannot run at all (no connection, every request failing). */
export class LoadError extends Error {
  readonly code = 'LOAD_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'LoadError';
  }
}

/** Issues one request for `worker` and calls back once with its error (null on success). */
export type LoadOp = (worker: number, cb: (err: Error | null) => void) => void;

/** gRPC clients of one service, `conns` separate HTTP/2 connections spread round-robin over `endpoints`; waits until each is ready. */
export async function connectClients<T extends grpc.Client>(
  Ctor: new (address: string, creds: grpc.ChannelCredentials, options?: object) => T,
  endpoints: readonly string[],
  conns: number,
): Promise<T[]> {
  // A local subchannel pool per client: otherwise grpc-js shares one connection per target.
  const clients = Array.from({ length: Math.max(1, conns) }, (_, i) =>
    new Ctor(endpoints[i % endpoints.length], grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }),
  );
  try {
    await Promise.all(
      clients.map((c) => new Promise<void>((resolve, reject) => c.waitForReady(Date.now() + 10000, (e) => (e ? reject(new LoadError(`connect: ${e.message}`)) : resolve())))),
    );
  } catch (e) {
    for (const c of clients) c.close();
    throw e;
  }
  return clients;
}

/** Keeps `concurrency` requests in flight for `durationMs`; the requests in flight at the end still count. Rejects
 * when every request failed. Latencies are recorded only when `measure`. */
export function closedLoop(op: LoadOp, concurrency: number, durationMs: number, measure: boolean): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let lat = new Float64Array(1 << 16);
    let ok = 0;
    let errors = 0;
    let firstError: string | undefined;
    let active = concurrency;
    const start = performance.now();
    const end = start + durationMs;
    const finish = () => {
      const seconds = (performance.now() - start) / 1000;
      if (ok === 0 && errors > 0) {
        reject(new LoadError(`every request failed (${errors}); first error: ${firstError}`));
        return;
      }
      const sorted = lat.subarray(0, measure ? ok : 0).sort();
      resolve({
        ops: ok,
        errors,
        firstError,
        seconds,
        opsPerSec: ok / seconds,
        p50Ms: quantile(sorted, 0.5),
        p99Ms: quantile(sorted, 0.99),
        maxMs: sorted.length ? sorted[sorted.length - 1] : Number.NaN,
      });
    };
    const issue = (worker: number) => {
      const t0 = performance.now();
      if (t0 >= end) {
        if (--active === 0) finish();
        return;
      }
      op(worker, (err) => {
        const t1 = performance.now();
        if (err) {
          errors++;
          firstError ??= err.message;
          // Back off a little so a failing cluster does not spin the client.
          setTimeout(() => issue(worker), 20);
          return;
        }
        if (measure) {
          if (ok === lat.length) {
            const bigger = new Float64Array(lat.length * 2);
            bigger.set(lat);
            lat = bigger;
          }
          lat[ok] = t1 - t0;
        }
        ok++;
        issue(worker);
      });
    };
    for (let w = 0; w < concurrency; w++) issue(w);
  });
}

/** What the put and range loads take besides their requests. */
export interface KvLoadOptions {
  /** gRPC targets (host:port); connections are spread over them round-robin. */
  endpoints: readonly string[];
  /** Requests in flight at once. */
  concurrency: number;
  /** HTTP/2 connections (each its own TCP connection). Default min(concurrency, 8). */
  connections?: number;
  /** Unmeasured warm-up before the measured run. Default 1500 ms. */
  warmupMs?: number;
  /** Length of the measured run. Default 8000 ms. */
  durationMs?: number;
  /** Per-request deadline. Default 10 s. */
  requestTimeoutMs?: number;
}

/**
 * A warm-up, then a measured window of KV requests: `requests` in turn from a random start, each sent by `send` on
 * one of the KV clients with its deadline; resolves with the measured window's figures.
 */
export async function runKvLoad<R>(
  opts: KvLoadOptions,
  requests: readonly R[],
  send: (client: grpc.Client, req: R, callOpts: grpc.CallOptions, cb: (err: Error | null) => void) => void,
): Promise<LoadResult> {
  const timeout = opts.requestTimeoutMs ?? 10000;
  const { KV } = loadClients();
  const clients = await connectClients(KV, opts.endpoints, opts.connections ?? Math.min(opts.concurrency, 8));
  try {
    let next = Math.floor(Math.random() * requests.length);
    const op: LoadOp = (worker, cb) => {
      const req = requests[next];
      next = next + 1 === requests.length ? 0 : next + 1;
      send(clients[worker % clients.length], req, { deadline: Date.now() + timeout }, cb);
    };
    await closedLoop(op, opts.concurrency, opts.warmupMs ?? 1500, false);
    return await closedLoop(op, opts.concurrency, opts.durationMs ?? 8000, true);
  } finally {
    for (const c of clients) c.close();
  }
}

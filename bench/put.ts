// Put load generator over etcd's gRPC KV API: N puts in flight at once, spread over a few HTTP/2
// connections, each put a 256-byte value to one of ~10k keys, latency measured per request on the
// client. The same code drives svc and the reference, so the two figures are comparable.
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../server/wire/index.js';
import { quantile } from './lib/stats.js';

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

export interface PutLoadResult {
  /** Successful puts in the measured window. */
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

/** Raised when the load cannot run at all (no connection, every put failing). */
export class PutLoadError extends Error {
  readonly code = 'PUT_LOAD_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'PutLoadError';
  }
}

type PutFn = (key: Buffer, value: Buffer, cb: (err: grpc.ServiceError | null) => void) => void;

/** Runs a warm-up, then a measured window of puts; resolves with throughput and latency figures. */
export async function runPutLoad(opts: PutLoadOptions): Promise<PutLoadResult> {
  const nkeys = opts.keys ?? 10000;
  const conns = Math.max(1, opts.connections ?? Math.min(opts.concurrency, 8));
  const timeout = opts.requestTimeoutMs ?? 10000;
  const value = randomBytes(opts.valueBytes ?? 256);
  const keys = Array.from({ length: nkeys }, (_, i) => Buffer.from(`/bench/put/${String(i).padStart(8, '0')}`));
  const { KV } = loadClients();
  // A local subchannel pool per client: otherwise grpc-js shares one connection per target.
  const clients = Array.from(
    { length: conns },
    (_, i) => new KV(opts.endpoints[i % opts.endpoints.length], grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }),
  );
  try {
    await Promise.all(
      clients.map(
        (c) => new Promise<void>((resolve, reject) => c.waitForReady(Date.now() + 10000, (e) => (e ? reject(new PutLoadError(`connect: ${e.message}`)) : resolve()))),
      ),
    );
    const puts: PutFn[] = clients.map((c) => (key, val, cb) => {
      (c as unknown as { Put: (req: object, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void) => void }).Put(
        { key, value: val },
        new grpc.Metadata(),
        { deadline: Date.now() + timeout },
        cb,
      );
    });
    await phase(puts, keys, value, opts.concurrency, opts.warmupMs ?? 1500, false);
    return await phase(puts, keys, value, opts.concurrency, opts.durationMs ?? 8000, true);
  } finally {
    for (const c of clients) c.close();
  }
}

/** Keeps `concurrency` puts in flight for `durationMs`; the puts already in flight at the end still count. */
function phase(puts: PutFn[], keys: Buffer[], value: Buffer, concurrency: number, durationMs: number, measure: boolean): Promise<PutLoadResult> {
  return new Promise((resolve, reject) => {
    let lat = new Float64Array(1 << 16);
    let ok = 0;
    let errors = 0;
    let firstError: string | undefined;
    let next = Math.floor(Math.random() * keys.length);
    let active = concurrency;
    const start = performance.now();
    const end = start + durationMs;
    const finish = () => {
      const seconds = (performance.now() - start) / 1000;
      if (ok === 0 && errors > 0) {
        reject(new PutLoadError(`every put failed (${errors}); first error: ${firstError}`));
        return;
      }
      const sorted = lat.subarray(0, ok).sort();
      resolve({
        ops: ok,
        errors,
        firstError,
        seconds,
        opsPerSec: ok / seconds,
        p50Ms: quantile(sorted, 0.5),
        p99Ms: quantile(sorted, 0.99),
        maxMs: ok ? sorted[ok - 1] : Number.NaN,
      });
    };
    const issue = (worker: number) => {
      const t0 = performance.now();
      if (t0 >= end) {
        if (--active === 0) finish();
        return;
      }
      const key = keys[next];
      next = next + 1 === keys.length ? 0 : next + 1;
      puts[worker % puts.length](key, value, (err) => {
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

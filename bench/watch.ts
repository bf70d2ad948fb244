// Watch fan-out: W watchers of one key, spread evenly over S gRPC Watch streams (one HTTP/2 connection each), and
// one writer putting that key with a few puts in flight for a fixed time. Figures: events delivered per second to
// all watchers together (from the writer's first put to the last event received), the delay from a put's call to
// each watcher receiving its event (p50/p99), and the verdict of bench/lib/watch-check.ts: every acknowledged put
// reached every watcher exactly once and in revision order. A failure is part of the result, never thrown away.
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../server/wire/index.js';
import { closedLoop, connectClients, LoadError, type LoadOp } from './lib/load.js';
import { checkDeliveries, type DeliveryCheck } from './lib/watch-check.js';
import { quantile } from './lib/stats.js';

export interface WatchLoadOptions {
  /** Where the watch streams go (round-robin, one connection per stream). */
  endpoints: readonly string[];
  /** Where the writer's puts go (the leader). */
  writerEndpoint: string;
  /** Watchers in all. Default 1000. */
  watchers?: number;
  /** Watch streams the watchers are spread over. Default 10. */
  streams?: number;
  /** The writer's puts in flight. Default 1. */
  writerInFlight?: number;
  /** How long the writer writes. Default 6000 ms. */
  durationMs?: number;
  /** How long to wait, after the writer stops, for the events still on their way. Default 60 s. */
  drainTimeoutMs?: number;
  /** The watched key. Default /bench/watch/key. */
  key?: string;
}

export interface WatchLoadResult {
  watchers: number;
  streams: number;
  /** Acknowledged puts of the writer. */
  puts: number;
  writerErrors: number;
  firstError?: string;
  putsPerSec: number;
  /** Events received by all watchers. */
  delivered: number;
  eventsPerSec: number;
  /** From a put's call to a watcher receiving its event, ms. */
  p50Ms: number;
  p99Ms: number;
  /** From the writer's first put to the last event received. */
  seconds: number;
  /** False when the drain timed out with events still missing. */
  drained: boolean;
  check: DeliveryCheck;
}

interface WatchEvent {
  kv: { mod_revision: string; value: Buffer } | null;
}
interface WatchResponse {
  watch_id: string;
  created: boolean;
  canceled: boolean;
  cancel_reason: string;
  events: WatchEvent[];
}
type Unary = (req: object, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, res?: { header: { revision: string } | null }) => void) => void;

/** Creates the watchers, runs the writer, waits for the events to drain and checks every watcher's deliveries. */
export async function runWatchLoad(opts: WatchLoadOptions): Promise<WatchLoadResult> {
  const nWatchers = opts.watchers ?? 1000;
  const nStreams = Math.max(1, Math.min(opts.streams ?? 10, nWatchers));
  const key = Buffer.from(opts.key ?? '/bench/watch/key');
  const { KV, Watch } = loadClients();
  const watchClients = await connectClients(Watch, opts.endpoints, nStreams);
  const [writer] = await connectClients(KV, [opts.writerEndpoint], 1);
  const calls: grpc.ClientDuplexStream<object, WatchResponse>[] = [];
  let closing = false;
  try {
    const perWatcher: number[][] = Array.from({ length: nWatchers }, () => []);
    const putStart: number[] = []; // by the writer's sequence number (the value it puts)
    let lat = new Float64Array(1 << 16);
    let nLat = 0;
    let delivered = 0;
    let lastEvent = 0;
    let streamProblem: string | undefined;
    let created = 0;
    let onCreated: (() => void) | undefined;
    for (let s = 0; s < nStreams; s++) {
      // Watchers s, s + S, s + 2S ... live on stream s; creates on one stream are answered in order.
      const mine = Array.from({ length: Math.ceil((nWatchers - s) / nStreams) }, (_, i) => s + i * nStreams);
      const byId = new Map<string, number>();
      let nextCreated = 0;
      const call = (watchClients[s] as unknown as { Watch: () => grpc.ClientDuplexStream<object, WatchResponse> }).Watch();
      calls.push(call);
      call.on('data', (res: WatchResponse) => {
        if (res.created) {
          byId.set(res.watch_id, mine[nextCreated++]);
          if (++created === nWatchers) onCreated?.();
        }
        if (res.canceled) streamProblem ??= `stream ${s}: watch ${res.watch_id} canceled by the server: ${res.cancel_reason}`;
        if (!res.events.length) return;
        const w = byId.get(res.watch_id);
        if (w === undefined) {
          streamProblem ??= `stream ${s}: events for unknown watch ${res.watch_id}`;
          return;
        }
        const now = performance.now();
        lastEvent = now;
        const revs = perWatcher[w];
        for (const ev of res.events) {
          if (!ev.kv) continue;
          revs.push(Number(ev.kv.mod_revision));
          delivered++;
          const t0 = putStart[Number(ev.kv.value.toString())];
          if (t0 !== undefined) {
            if (nLat === lat.length) {
              const bigger = new Float64Array(lat.length * 2);
              bigger.set(lat);
              lat = bigger;
            }
            lat[nLat++] = now - t0;
          }
        }
      });
      call.on('error', (e: Error) => {
        if (!closing) streamProblem ??= `stream ${s}: ${e.message}`;
      });
      for (let i = 0; i < mine.length; i++) call.write({ create_request: { key } });
    }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new LoadError(`only ${created} of ${nWatchers} watchers created within 30 s${streamProblem ? ` (${streamProblem})` : ''}`)), 30000);
      onCreated = () => {
        clearTimeout(timer);
        resolve();
      };
      if (created === nWatchers) onCreated();
    });

    const expected: number[] = [];
    let seq = 0;
    const put = (writer as unknown as { Put: Unary }).Put.bind(writer);
    const op: LoadOp = (_worker, cb) => {
      const n = seq++;
      putStart[n] = performance.now();
      put({ key, value: Buffer.from(String(n)) }, new grpc.Metadata(), { deadline: Date.now() + 10000 }, (e, res) => {
        if (!e && res?.header) expected.push(Number(res.header.revision));
        cb(e);
      });
    };
    const first = performance.now();
    const w = await closedLoop(op, opts.writerInFlight ?? 1, opts.durationMs ?? 6000, false);
    const target = expected.length * nWatchers;
    const drainEnd = performance.now() + (opts.drainTimeoutMs ?? 60000);
    while (delivered < target && performance.now() < drainEnd && !streamProblem) await new Promise((r) => setTimeout(r, 50));
    const drained = delivered >= target;
    // A moment more, so a late duplicate is counted too.
    await new Promise((r) => setTimeout(r, 200));
    const check = checkDeliveries(expected, perWatcher);
    if (streamProblem && check.ok) {
      check.ok = false;
      check.firstProblem = streamProblem;
    } else if (streamProblem) check.firstProblem = `${streamProblem}; ${check.firstProblem}`;
    const sorted = lat.subarray(0, nLat).sort();
    const seconds = ((lastEvent || performance.now()) - first) / 1000;
    return {
      watchers: nWatchers,
      streams: nStreams,
      puts: w.ops,
      writerErrors: w.errors,
      firstError: w.firstError,
      putsPerSec: w.opsPerSec,
      delivered,
      eventsPerSec: delivered / seconds,
      p50Ms: quantile(sorted, 0.5),
      p99Ms: quantile(sorted, 0.99),
      seconds,
      drained,
      check,
    };
  } finally {
    closing = true;
    for (const c of calls) c.cancel();
    for (const c of watchClients) c.close();
    writer.close();
  }
}

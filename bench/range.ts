// Range load generator over etcd's gRPC KV API, the read twin of put.ts: N ranges in flight over the same closed
// loop, against a keyspace filled beforehand (prefillRangeKeys). Kinds: a single-key get, serializable (answered
// from the member's own store) or linearizable (read index through the leader), and a linearizable prefix range of
// 10 keys. Every answer is checked for the number of keys it must hold, so an empty answer counts as an error.
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../server/wire/index.js';
import { connectClients, LoadError, runKvLoad, type KvLoadOptions, type LoadResult } from './lib/load.js';

export type RangeKind = 'serializable' | 'linearizable' | 'prefix';
export const RANGE_KINDS: readonly RangeKind[] = ['serializable', 'linearizable', 'prefix'];

/** Keys in the prefilled keyspace; a prefix range covers RANGE_PREFIX_KEYS of them. */
export const RANGE_KEYS = 10000;
export const RANGE_PREFIX_KEYS = 10;

/** The i-th key of the range keyspace (/bench/range/00000000 ...). */
export function rangeKey(i: number): string {
  return `/bench/range/${String(i).padStart(8, '0')}`;
}

/** The prefix range covering keys 10*g .. 10*g+9, as [key, range_end) (range_end is the prefix with its last byte + 1). */
export function prefixRange(group: number): [string, string] {
  const prefix = rangeKey(group * RANGE_PREFIX_KEYS).slice(0, -1);
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return [prefix, end];
}

/** A table label for a kind. */
export function rangeKindLabel(kind: RangeKind): string {
  if (kind === 'prefix') return `prefix of ${RANGE_PREFIX_KEYS}, linearizable`;
  return `get, ${kind}`;
}

type Unary = (req: object, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, res?: { kvs: unknown[] }) => void) => void;

/** Writes the keyspace (RANGE_KEYS keys, `valueBytes` each) with 64 puts in flight; rejects on the first failed put. */
export async function prefillRangeKeys(endpoint: string, valueBytes = 256): Promise<void> {
  const value = randomBytes(valueBytes);
  const { KV } = loadClients();
  const [client] = await connectClients(KV, [endpoint], 1);
  const put = (client as unknown as { Put: Unary }).Put.bind(client);
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < RANGE_KEYS) {
          const key = Buffer.from(rangeKey(next++));
          await new Promise<void>((resolve, reject) =>
            put({ key, value }, new grpc.Metadata(), { deadline: Date.now() + 30000 }, (e) => (e ? reject(new LoadError(`prefill ${key}: ${e.message}`)) : resolve())),
          );
        }
      }),
    );
  } finally {
    client.close();
  }
}

export interface RangeLoadOptions extends KvLoadOptions {
  kind: RangeKind;
}

/** Runs a warm-up, then a measured window of ranges over the prefilled keyspace (keys in turn). */
export async function runRangeLoad(opts: RangeLoadOptions): Promise<LoadResult> {
  const serializable = opts.kind === 'serializable';
  const want = opts.kind === 'prefix' ? RANGE_PREFIX_KEYS : 1;
  const requests =
    opts.kind === 'prefix'
      ? Array.from({ length: RANGE_KEYS / RANGE_PREFIX_KEYS }, (_, g) => {
          const [key, end] = prefixRange(g);
          return { key: Buffer.from(key), range_end: Buffer.from(end), serializable };
        })
      : Array.from({ length: RANGE_KEYS }, (_, i) => ({ key: Buffer.from(rangeKey(i)), serializable }));
  return runKvLoad(opts, requests, (c, req, callOpts, cb) =>
    (c as unknown as { Range: Unary }).Range(req, new grpc.Metadata(), callOpts, (e, res) => {
      if (e) cb(e);
      else if (res?.kvs.length !== want) cb(new Error(`range ${req.key.toString()} returned ${res?.kvs.length ?? 0} keys, want ${want} (keyspace not filled?)`));
      else cb(null);
    }),
  );
}

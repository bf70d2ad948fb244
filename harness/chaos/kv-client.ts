// A deliberately thin gRPC client for the chaos workload: one call per operation, no retries, a fixed
// deadline, and an honest classification of every error as "failed" (provably not applied) or
// "unknown" (may have been applied). The client library retries and fails over, which is right for
// applications but would hide from the history what the server actually did.

import * as grpc from '@grpc/grpc-js';
import { loadClients } from '../../server/wire/index.js';
import type { KvInput, KvOutput, Outcome } from './history.js';

/**
 * Messages that prove the server did not apply the request. Not 'etcdserver: server stopped': a member
 * shutting down rejects its in-flight proposals with it, and those may already be committed (the
 * harness found exactly that; see FINDINGS.md).
 */
const NOT_APPLIED = [
  'etcdserver: no leader',
  'etcdserver: not leader',
  'etcdserver: not capable',
  'etcdserver: too many requests',
  'etcdserver: mvcc: database space exceeded',
  // a learner (a replaced member catching up) refuses before the request reaches a handler
  'etcdserver: rpc not supported for learner',
];
/** Transport errors meaning nothing was sent (no connection). */
const NEVER_SENT = /No connection established|ECONNREFUSED|connection refused|Failed to connect|Channel has been shut down/i;

export interface CallResult {
  outcome: Outcome;
  output?: KvOutput;
  revision?: number;
  error?: string;
}

type Unary = (req: unknown, meta: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Record<string, unknown>) => void) => void;

/** One KV connection to one member. */
export class ChaosKvClient {
  private readonly kv: grpc.Client & Record<string, Unary>;

  constructor(
    readonly endpoint: string,
    readonly deadlineMs = 2000,
  ) {
    const { KV } = loadClients();
    this.kv = new KV(endpoint, grpc.credentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      'grpc.enable_retries': 0,
    }) as unknown as grpc.Client & Record<string, Unary>;
  }

  /** Closes the channel. */
  close(): void {
    this.kv.close();
  }

  private call(method: string, req: unknown): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.kv[method].call(this.kv, req, new grpc.Metadata(), { deadline: Date.now() + this.deadlineMs }, (err, res) => (err ? reject(err) : resolve(res)));
    });
  }

  /** Runs one operation and classifies its result. */
  async run(input: KvInput): Promise<CallResult> {
    const key = Buffer.from(input.key);
    try {
      switch (input.kind) {
        case 'put': {
          const r = await this.call('Put', { key, value: Buffer.from(input.value) });
          return { outcome: 'ok', output: { kind: 'put' }, revision: headerRev(r) };
        }
        case 'get': {
          const r = await this.call('Range', { key });
          const kvs = (r.kvs as Array<{ value: Buffer }> | undefined) ?? [];
          return { outcome: 'ok', output: { kind: 'get', value: kvs.length ? Buffer.from(kvs[0].value).toString('utf8') : null }, revision: headerRev(r) };
        }
        case 'delete': {
          const r = await this.call('DeleteRange', { key });
          return { outcome: 'ok', output: { kind: 'delete', deleted: Number(r.deleted ?? 0) }, revision: headerRev(r) };
        }
        case 'cas': {
          const compare =
            input.expected === null
              ? { result: 'EQUAL', target: 'VERSION', key, version: '0' }
              : { result: 'EQUAL', target: 'VALUE', key, value: Buffer.from(input.expected) };
          const r = await this.call('Txn', { compare: [compare], success: [{ request_put: { key, value: Buffer.from(input.value) } }], failure: [] });
          return { outcome: 'ok', output: { kind: 'cas', succeeded: Boolean(r.succeeded) }, revision: headerRev(r) };
        }
      }
    } catch (e) {
      return classify(e as grpc.ServiceError);
    }
  }

  /** A linearizable read of one key at an optional revision (for post-run checks): value or null. */
  async getAt(key: string, revision = 0): Promise<{ value: string | null; modRevision: number; revision: number }> {
    const r = await this.call('Range', { key: Buffer.from(key), revision: String(revision) });
    const kvs = (r.kvs as Array<{ value: Buffer; mod_revision: string }> | undefined) ?? [];
    return {
      value: kvs.length ? Buffer.from(kvs[0].value).toString('utf8') : null,
      modRevision: kvs.length ? Number(kvs[0].mod_revision) : 0,
      revision: headerRev(r),
    };
  }

  /** A plain put (for fillers); rejects on error. */
  async put(key: string, value: Buffer | string): Promise<number> {
    const r = await this.call('Put', { key: Buffer.from(key), value: Buffer.from(value) });
    return headerRev(r);
  }
}

function headerRev(r: Record<string, unknown>): number {
  return Number((r.header as { revision?: string } | undefined)?.revision ?? 0);
}

/** ok/failed/unknown for an error. */
export function classify(err: grpc.ServiceError): CallResult {
  const msg = err.details || err.message;
  if (NOT_APPLIED.includes(msg)) return { outcome: 'failed', error: msg };
  if (err.code === grpc.status.UNAVAILABLE && NEVER_SENT.test(msg)) return { outcome: 'failed', error: msg };
  if (err.code === grpc.status.INVALID_ARGUMENT) return { outcome: 'failed', error: msg };
  return { outcome: 'unknown', error: `${grpc.status[err.code] ?? err.code}: ${msg}` };
}

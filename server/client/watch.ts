// A watch: one Watch stream per watcher. Responses arrive as 'response' events and through async iteration.
// When the stream breaks with UNAVAILABLE (the member went away) the watcher re-creates itself on the next
// endpoint, resuming after the last revision it delivered, like the reference's client; a compacted start
// revision ends it with a ClientError.
import { EventEmitter } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import { ResponseQueue } from './response-queue.js';
import { ClientError, Status, toClientError } from './errors.js';
import type { WatchResponse } from './types.js';

/** What a watcher needs from its client. */
export interface StreamSource {
  /** Opens a bidirectional stream of `method` on the current endpoint. */
  openDuplex(service: 'Watch' | 'Lease', method: string): Promise<grpc.ClientDuplexStream<unknown, unknown>>;
  /** Moves to the next endpoint after a failure of the current one. */
  failover(): void;
  /** True once the client is closed. */
  readonly closed: boolean;
}

/**
 * Opens a stream for a watcher or keep-alive: undefined when opening failed (`fail` was called) or when the
 * caller ended meanwhile (the new stream is cancelled at once).
 */
export async function openStream(
  source: StreamSource,
  service: 'Watch' | 'Lease',
  method: string,
  ended: () => boolean,
  fail: (e: ClientError) => void,
): Promise<grpc.ClientDuplexStream<unknown, unknown> | undefined> {
  if (ended()) return undefined;
  let stream: grpc.ClientDuplexStream<unknown, unknown>;
  try {
    stream = await source.openDuplex(service, method);
  } catch (e) {
    fail(toClientError(e));
    return undefined;
  }
  if (ended()) {
    stream.cancel();
    return undefined;
  }
  return stream;
}

/** The reference's error for a watch that starts below the compaction point. */
export const ERR_COMPACTED = 'etcdserver: mvcc: required revision has been compacted';

/**
 * A running watch. Events: 'response' (WatchResponse), 'error' (ClientError; only emitted when a listener
 * is attached, it always ends async iteration), 'end'. `created` resolves once the server accepted it.
 */
export class Watcher extends EventEmitter implements AsyncIterable<WatchResponse> {
  /** Resolves with the creation response. */
  readonly created: Promise<WatchResponse>;
  private resolveCreated!: (r: WatchResponse) => void;
  private rejectCreated!: (e: unknown) => void;
  private stream?: grpc.ClientDuplexStream<unknown, unknown>;
  private nextRev: bigint;
  private cancelling = false;
  private readonly responses = new ResponseQueue<WatchResponse>();

  constructor(
    private readonly source: StreamSource,
    private readonly request: Record<string, unknown>,
  ) {
    super();
    this.nextRev = BigInt(String(request.start_revision ?? '0'));
    this.created = new Promise((res, rej) => {
      this.resolveCreated = res;
      this.rejectCreated = rej;
    });
    this.created.catch(() => undefined);
    void this.open();
  }

  private async open(): Promise<void> {
    const stream = await openStream(this.source, 'Watch', 'Watch', () => this.responses.ended, (e) => this.finish(e));
    if (!stream) return;
    this.stream = stream;
    stream.on('data', (r: WatchResponse) => this.onResponse(r));
    stream.on('error', (e) => this.onStreamError(stream, toClientError(e)));
    stream.on('end', () => {
      if (this.stream === stream && !this.responses.ended) this.onStreamError(stream, new ClientError(Status.UNAVAILABLE, 'watch stream ended by the server'));
    });
    stream.write({ create_request: { ...this.request, start_revision: this.nextRev.toString() } });
  }

  private onResponse(r: WatchResponse): void {
    if (this.responses.ended) return;
    if (r.created) {
      // Resume point for a re-created watch: nothing at or below the creation revision is owed to us.
      if (this.nextRev === 0n) this.nextRev = BigInt(r.header.revision) + 1n;
      this.resolveCreated(r);
      return;
    }
    if (r.canceled) {
      if (this.cancelling) return this.finish();
      if (r.compact_revision !== '0' && r.compact_revision !== '') {
        return this.finish(new ClientError(Status.OUT_OF_RANGE, ERR_COMPACTED));
      }
      return this.finish(r.cancel_reason ? new ClientError(Status.FAILED_PRECONDITION, r.cancel_reason) : undefined);
    }
    if (r.events.length > 0) this.nextRev = BigInt(r.events[r.events.length - 1].kv.mod_revision) + 1n;
    else if (r.header && BigInt(r.header.revision) + 1n > this.nextRev) this.nextRev = BigInt(r.header.revision) + 1n;
    this.push(r);
  }

  private onStreamError(stream: grpc.ClientDuplexStream<unknown, unknown>, e: ClientError): void {
    if (this.stream !== stream || this.responses.ended) return;
    this.stream = undefined;
    if (this.cancelling || this.source.closed) return this.finish(this.source.closed ? new ClientError(Status.CANCELLED, e.message) : undefined);
    if (e.code === Status.UNAVAILABLE) {
      this.source.failover();
      setTimeout(() => void this.open(), 100).unref();
      return;
    }
    this.finish(e);
  }

  private push(r: WatchResponse): void {
    this.emit('response', r);
    this.responses.push(r);
  }

  private finish(err?: ClientError): void {
    if (!this.responses.end(err)) return;
    if (err) {
      this.rejectCreated(err);
      if (this.listenerCount('error') > 0) this.emit('error', err);
    } else {
      this.rejectCreated(new ClientError(Status.CANCELLED, 'watch canceled'));
    }
    const s = this.stream;
    this.stream = undefined;
    if (s) {
      s.end();
      s.cancel();
    }
    this.emit('end');
  }

  /** Cancels the watch on the server and ends the stream. */
  async cancel(): Promise<void> {
    if (this.responses.ended) return;
    this.cancelling = true;
    const s = this.stream;
    const created = await this.created.catch(() => undefined);
    if (s && created && !this.responses.ended) {
      s.write({ cancel_request: { watch_id: created.watch_id } });
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 1000);
        t.unref();
        this.once('end', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    this.finish();
  }

  /** Ends the watch locally (used by Client.close). */
  close(): void {
    this.finish(new ClientError(Status.CANCELLED, 'grpc: the client connection is closing'));
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchResponse> {
    return this.responses.iterate();
  }

}

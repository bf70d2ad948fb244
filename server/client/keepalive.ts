// Keeping a lease alive: a LeaseKeepAlive stream that sends the lease id every third of its TTL. It ends
// when the lease is gone (the server answers TTL 0), when cancelled, or when the client closes; a broken
// stream (UNAVAILABLE) is reopened on the next endpoint.
import { EventEmitter } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import { ResponseQueue } from './response-queue.js';
import { ClientError, Status, toClientError } from './errors.js';
import type { LeaseKeepAliveResponse } from './types.js';
import { openStream, type StreamSource } from './watch.js';

/**
 * A running keep-alive. Events: 'response' (LeaseKeepAliveResponse), 'expired' (the lease no longer exists),
 * 'error' (only with a listener), 'end'. Async iteration yields the responses until it ends.
 */
export class KeepAlive extends EventEmitter implements AsyncIterable<LeaseKeepAliveResponse> {
  private stream?: grpc.ClientDuplexStream<unknown, unknown>;
  private timer?: NodeJS.Timeout;
  private intervalMs = 500;
  private readonly responses = new ResponseQueue<LeaseKeepAliveResponse>();
  /** The lease's remaining TTL after the last renewal, in seconds (-1 before the first answer). */
  lastTtl = -1;

  constructor(
    private readonly source: StreamSource,
    readonly id: string,
  ) {
    super();
    void this.open();
  }

  private async open(): Promise<void> {
    const stream = await openStream(this.source, 'Lease', 'LeaseKeepAlive', () => this.responses.ended, (e) => this.finish(e));
    if (!stream) return;
    this.stream = stream;
    stream.on('data', (r: LeaseKeepAliveResponse) => this.onResponse(r));
    stream.on('error', (e) => this.onStreamError(stream, toClientError(e)));
    stream.on('end', () => this.onStreamError(stream, new ClientError(Status.UNAVAILABLE, 'keep-alive stream ended by the server')));
    this.send();
  }

  private send(): void {
    clearTimeout(this.timer);
    if (this.responses.ended || !this.stream) return;
    this.stream.write({ ID: this.id });
    this.timer = setTimeout(() => this.send(), this.intervalMs);
  }

  private onResponse(r: LeaseKeepAliveResponse): void {
    if (this.responses.ended) return;
    const ttl = Number(r.TTL);
    if (ttl <= 0) {
      this.emit('expired');
      this.finish();
      return;
    }
    this.lastTtl = ttl;
    this.intervalMs = Math.max(500, (ttl * 1000) / 3);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.send(), this.intervalMs);
    this.emit('response', r);
    this.responses.push(r);
  }

  private onStreamError(stream: grpc.ClientDuplexStream<unknown, unknown>, e: ClientError): void {
    if (this.stream !== stream || this.responses.ended) return;
    this.stream = undefined;
    clearTimeout(this.timer);
    if (this.source.closed) return this.finish(new ClientError(Status.CANCELLED, e.message));
    if (e.code === Status.UNAVAILABLE) {
      this.source.failover();
      setTimeout(() => void this.open(), 100).unref();
      return;
    }
    this.finish(e);
  }

  private finish(err?: ClientError): void {
    if (!this.responses.end(err)) return;
    clearTimeout(this.timer);
    if (err && this.listenerCount('error') > 0) this.emit('error', err);
    const s = this.stream;
    this.stream = undefined;
    if (s) {
      s.end();
      s.cancel();
    }
    this.emit('end');
  }

  /** Stops renewing (the lease then expires after its TTL unless revoked). */
  cancel(): void {
    this.finish();
  }

  [Symbol.asyncIterator](): AsyncIterator<LeaseKeepAliveResponse> {
    return this.responses.iterate();
  }

}

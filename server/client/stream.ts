// What a watcher and a keep-alive share: one bidirectional stream on the client's current endpoint, reopened on
// the next endpoint when it breaks with UNAVAILABLE, its responses queued for async iteration.
import { EventEmitter } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import { ResponseQueue } from './response-queue.js';
import { ClientError, Status, toClientError } from './errors.js';

/** What a watcher or keep-alive needs from its client. */
export interface StreamSource {
  /** Opens a bidirectional stream of `method` on the current endpoint. */
  openDuplex(service: 'Watch' | 'Lease', method: string): Promise<grpc.ClientDuplexStream<unknown, unknown>>;
  /** Moves to the next endpoint after a failure of the current one. */
  failover(): void;
  /** True once the client is closed. */
  readonly closed: boolean;
}

/**
 * A stream that reopens itself after a member goes away. Subclasses say what to send once it is open
 * (started), what a response means (onResponse) and how they end (finish, which calls closeStream).
 */
export abstract class ReopeningStream<R> extends EventEmitter implements AsyncIterable<R> {
  protected stream?: grpc.ClientDuplexStream<unknown, unknown>;
  protected readonly responses = new ResponseQueue<R>();
  /** Set by a cancel in progress: a broken stream then ends it quietly instead of reopening. */
  protected cancelling = false;

  constructor(
    protected readonly source: StreamSource,
    private readonly service: 'Watch' | 'Lease',
    private readonly method: string,
    /** Names the stream in the error when the server ends it. */
    private readonly what: string,
  ) {
    super();
  }

  /** Sends what the newly opened stream needs first. */
  protected abstract started(): void;
  protected abstract onResponse(r: R): void;
  protected abstract finish(err?: ClientError): void;
  /** Called when the stream broke, before it is reopened or ended. */
  protected streamLost(): void {}

  /** Opens the stream (again); a failure to open ends this with that error. */
  protected async open(): Promise<void> {
    if (this.responses.ended) return;
    let stream: grpc.ClientDuplexStream<unknown, unknown>;
    try {
      stream = await this.source.openDuplex(this.service, this.method);
    } catch (e) {
      this.finish(toClientError(e));
      return;
    }
    if (this.responses.ended) {
      // ended meanwhile
      stream.cancel();
      return;
    }
    this.stream = stream;
    stream.on('data', (r: R) => this.onResponse(r));
    stream.on('error', (e) => this.onStreamError(stream, toClientError(e)));
    stream.on('end', () => this.onStreamError(stream, new ClientError(Status.UNAVAILABLE, `${this.what} stream ended by the server`)));
    this.started();
  }

  private onStreamError(stream: grpc.ClientDuplexStream<unknown, unknown>, e: ClientError): void {
    if (this.stream !== stream || this.responses.ended) return;
    this.stream = undefined;
    this.streamLost();
    if (this.source.closed) return this.finish(new ClientError(Status.CANCELLED, e.message));
    if (this.cancelling) return this.finish();
    if (e.code === Status.UNAVAILABLE) {
      this.source.failover();
      setTimeout(() => void this.open(), 100).unref();
      return;
    }
    this.finish(e);
  }

  /** Ends the stream (if one is open) and emits 'end'. */
  protected closeStream(): void {
    const s = this.stream;
    this.stream = undefined;
    if (s) {
      s.end();
      s.cancel();
    }
    this.emit('end');
  }

  [Symbol.asyncIterator](): AsyncIterator<R> {
    return this.responses.iterate();
  }
}

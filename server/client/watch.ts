// A watch: one Watch stream per watcher. Responses arrive as 'response' events and through async iteration.
// When the stream breaks with UNAVAILABLE (the member went away) the watcher re-creates itself on the next
// endpoint, resuming after the last revision it delivered, like the reference's client; a compacted start
// revision ends it with a ClientError.
import { ClientError, Status } from './errors.js';
import { ReopeningStream, type StreamSource } from './stream.js';
import type { WatchResponse } from './types.js';

/** The reference's error for a watch that starts below the compaction point. */
export const ERR_COMPACTED = 'etcdserver: mvcc: required revision has been compacted';

/**
 * A running watch. Events: 'response' (WatchResponse), 'error' (ClientError; only emitted when a listener
 * is attached, it always ends async iteration), 'end'. `created` resolves once the server accepted it.
 */
export class Watcher extends ReopeningStream<WatchResponse> {
  /** Resolves with the creation response. */
  readonly created: Promise<WatchResponse>;
  private resolveCreated!: (r: WatchResponse) => void;
  private rejectCreated!: (e: unknown) => void;
  private nextRev: bigint;

  constructor(
    source: StreamSource,
    private readonly request: Record<string, unknown>,
  ) {
    super(source, 'Watch', 'Watch', 'watch');
    this.nextRev = BigInt(String(request.start_revision ?? '0'));
    this.created = new Promise((res, rej) => {
      this.resolveCreated = res;
      this.rejectCreated = rej;
    });
    this.created.catch(() => undefined);
    void this.open();
  }

  protected override started(): void {
    this.stream!.write({ create_request: { ...this.request, start_revision: this.nextRev.toString() } });
  }

  protected override onResponse(r: WatchResponse): void {
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

  private push(r: WatchResponse): void {
    this.emit('response', r);
    this.responses.push(r);
  }

  protected override finish(err?: ClientError): void {
    if (!this.responses.end(err)) return;
    if (err) {
      this.rejectCreated(err);
      if (this.listenerCount('error') > 0) this.emit('error', err);
    } else {
      this.rejectCreated(new ClientError(Status.CANCELLED, 'watch canceled'));
    }
    this.closeStream();
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
}

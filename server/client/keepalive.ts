// Keeping a lease alive: a LeaseKeepAlive stream that sends the lease id every third of its TTL. It ends
// when the lease is gone (the server answers TTL 0), when cancelled, or when the client closes; a broken
// stream (UNAVAILABLE) is reopened on the next endpoint.
import type { ClientError } from './errors.js';
import { ReopeningStream, type StreamSource } from './stream.js';
import type { LeaseKeepAliveResponse } from './types.js';

/**
 * A running keep-alive. Events: 'response' (LeaseKeepAliveResponse), 'expired' (the lease no longer exists),
 * 'error' (only with a listener), 'end'. Async iteration yields the responses until it ends.
 */
export class KeepAlive extends ReopeningStream<LeaseKeepAliveResponse> {
  private timer?: NodeJS.Timeout;
  private intervalMs = 500;
  /** The lease's remaining TTL after the last renewal, in seconds (-1 before the first answer). */
  lastTtl = -1;

  constructor(
    source: StreamSource,
    readonly id: string,
  ) {
    super(source, 'Lease', 'LeaseKeepAlive', 'keep-alive');
    void this.open();
  }

  protected override started(): void {
    this.send();
  }

  private send(): void {
    clearTimeout(this.timer);
    if (this.responses.ended || !this.stream) return;
    this.stream.write({ ID: this.id });
    this.timer = setTimeout(() => this.send(), this.intervalMs);
  }

  protected override onResponse(r: LeaseKeepAliveResponse): void {
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

  protected override streamLost(): void {
    clearTimeout(this.timer);
  }

  protected override finish(err?: ClientError): void {
    if (!this.responses.end(err)) return;
    clearTimeout(this.timer);
    if (err && this.listenerCount('error') > 0) this.emit('error', err);
    this.closeStream();
  }

  /** Stops renewing (the lease then expires after its TTL unless revoked). */
  cancel(): void {
    this.finish();
  }
}

// Responses of a long-lived stream (watch, lease keep-alive), buffered for async iteration: what arrives is
// queued until the consumer takes it; the iteration ends when the stream ends, and throws its failure
// unless the stream was cancelled.
import { ClientError, Status } from './errors.js';

export class ResponseQueue<T> {
  private readonly items: T[] = [];
  private done = false;
  private failure?: ClientError;
  private wake?: () => void;

  get ended(): boolean {
    return this.done;
  }

  push(r: T): void {
    this.items.push(r);
    this.wake?.();
  }

  /** Marks the stream ended (with the error it failed with, if any); returns false if it already was. */
  end(failure?: ClientError): boolean {
    if (this.done) return false;
    this.done = true;
    this.failure = failure;
    this.wake?.();
    return true;
  }

  async *iterate(): AsyncGenerator<T> {
    for (;;) {
      const r = this.items.shift();
      if (r) {
        yield r;
        continue;
      }
      if (this.done) {
        if (this.failure && this.failure.code !== Status.CANCELLED) throw this.failure;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

// The one retry policy of a step (or a reconcile) that keeps failing: the first retry after `baseMs`, each next one
// twice as late, never later than `maxMs`. The controller's work queue owns one (controller/queue.ts); the local
// loop retries a failed step by the same policy.

export class Backoff {
  constructor(readonly baseMs = 500, readonly maxMs = 60_000) {}

  /** The wait before the retry after `failures` consecutive failures (1: the first retry). */
  delay(failures: number): number {
    return Math.min(this.maxMs, this.baseMs * 2 ** Math.max(0, failures - 1));
  }
}

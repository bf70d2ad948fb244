// A rate-limited work queue of keys ("namespace/name"), as client-go's: a key is queued at most once, never
// handled by two workers at once (a key added while it is handled is handled again afterwards), retried
// with exponential backoff after failures, and re-queued after a delay on request. Its backoff policy (`policy`) is
// the operator's one: the controller retries a failing step by it too.
import { Backoff } from '../orchestrator/backoff.js';

/** What a handler returns: re-queue after this many ms, or undefined for "done until something changes". */
export type Requeue = number | undefined;

export interface WorkQueueOptions {
  /** First retry delay after a failure. Default 500 ms. */
  baseDelayMs?: number;
  /** Largest retry delay. Default 60 s. */
  maxDelayMs?: number;
}

/** The queue. */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private waiters: Array<() => void> = [];
  private stopped = false;
  /** Retry delays: of a key whose handler threw, and of a step that keeps failing. */
  readonly policy: Backoff;

  constructor(opts: WorkQueueOptions = {}) {
    this.policy = new Backoff(opts.baseDelayMs, opts.maxDelayMs);
  }

  /** Queues `key` now. */
  add(key: string): void {
    if (this.stopped) return;
    const t = this.timers.get(key);
    if (t) {
      clearTimeout(t);
      this.timers.delete(key);
    }
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.waiters.shift()?.();
  }

  /** Queues `key` after `ms` (an earlier pending delay wins). */
  addAfter(key: string, ms: number): void {
    if (this.stopped || this.timers.has(key) || this.queued.has(key)) return;
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    t.unref();
    this.timers.set(key, t);
  }

  /** Delay of the next retry of `key` (grows with its consecutive failures). */
  backoff(key: string): number {
    return this.policy.delay((this.failures.get(key) ?? 0) + 1);
  }

  private async next(): Promise<string | undefined> {
    while (!this.stopped && this.queue.length === 0) await new Promise<void>((r) => this.waiters.push(r));
    if (this.stopped) return undefined;
    const key = this.queue.shift()!;
    this.queued.delete(key);
    this.active.add(key);
    return key;
  }

  /** Runs `workers` loops calling `handle` until stop(); resolves when they all ended. */
  async run(handle: (key: string) => Promise<Requeue>, workers = 1, onError?: (key: string, e: unknown) => void): Promise<void> {
    const loop = async () => {
      for (;;) {
        const key = await this.next();
        if (key === undefined) return;
        let after: Requeue;
        try {
          after = await handle(key);
          this.failures.delete(key);
        } catch (e) {
          onError?.(key, e);
          after = this.backoff(key);
          this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
        }
        this.active.delete(key);
        if (this.dirty.delete(key)) this.add(key);
        else if (after !== undefined) this.addAfter(key, after);
      }
    };
    await Promise.all(Array.from({ length: workers }, loop));
  }

  /** Stops the workers (after their current key) and drops pending keys. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const w of this.waiters) w();
    this.waiters = [];
  }
}

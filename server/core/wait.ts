// Waiters for asynchronous results keyed by an id (proposals waiting for their entry to apply) or by an index
// (reads waiting until the local member has applied up to a read index).

interface IdWaiter<T> {
  resolve: (v: T) => void;
  reject: (e: Error) => void;
  /** performance.now() after which the waiter times out. */
  deadline: number;
  onTimeout: () => Error;
}

/**
 * Waiters by id, each with a deadline. One timer serves them all (armed for the earliest deadline, and swept when it
 * fires), not a timer per waiter: a proposal costs no setTimeout/clearTimeout pair. The timer is cleared once
 * nobody waits, so it holds nothing up.
 */
export class IdWaiters<T> {
  private readonly waiting = new Map<bigint, IdWaiter<T>>();
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (Infinity: none armed). */
  private timerAt = Infinity;

  /** `onSettled` hears of every waiter that leaves (resolved, rejected or timed out). */
  constructor(private readonly onSettled?: () => void) {}

  register(id: bigint, timeoutMs: number, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const deadline = performance.now() + timeoutMs;
      this.waiting.set(id, { resolve, reject, deadline, onTimeout });
      if (deadline < this.timerAt) this.arm(deadline);
    });
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.sweep(), Math.max(0, at - performance.now()));
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  /** Times out every waiter past its deadline, in registration order, and arms the timer for the next one. */
  private sweep(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const [id, w] of this.waiting) {
      if (w.deadline <= now) {
        this.waiting.delete(id);
        this.onSettled?.();
        w.reject(w.onTimeout());
      } else if (w.deadline < next) {
        next = w.deadline;
      }
    }
    if (next < Infinity && next < this.timerAt) this.arm(next);
  }

  private take(id: bigint): IdWaiter<T> | undefined {
    const w = this.waiting.get(id);
    if (!w) return undefined;
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.disarm();
    this.onSettled?.();
    return w;
  }

  has(id: bigint): boolean {
    return this.waiting.has(id);
  }

  resolve(id: bigint, v: T): void {
    this.take(id)?.resolve(v);
  }

  reject(id: bigint, e: Error): void {
    this.take(id)?.reject(e);
  }

  rejectAll(make: () => Error): void {
    for (const id of [...this.waiting.keys()]) this.reject(id, make());
  }

  get size(): number {
    return this.waiting.size;
  }
}

/** Callbacks run once the applied index reaches their target. */
export class IndexWaiters {
  private waiting: Array<{ index: number; fn: () => void }> = [];

  wait(index: number, fn: () => void): void {
    this.waiting.push({ index, fn });
  }

  /** Run every waiter at or below `applied`. */
  trigger(applied: number): void {
    if (this.waiting.length === 0) return;
    const ready = this.waiting.filter((w) => w.index <= applied);
    if (ready.length === 0) return;
    this.waiting = this.waiting.filter((w) => w.index > applied);
    for (const w of ready) w.fn();
  }
}

// Waiters for asynchronous results keyed by an id (proposals waiting for their entry to apply) or by an index
// (reads waiting until the local member has applied up to a read index).

export class IdWaiters<T> {
  private readonly waiting = new Map<bigint, { resolve: (v: T) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

  register(id: bigint, timeoutMs: number, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(onTimeout());
      }, timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
    });
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

  /** The waiter of `id`, no longer waiting and its timer stopped (undefined: none). */
  private take(id: bigint) {
    const w = this.waiting.get(id);
    if (!w) return undefined;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    return w;
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

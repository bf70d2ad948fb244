// A bounded window of in-flight append messages to one follower (by their last index), so a
// leader in pipeline mode cannot flood a slow follower.

/** Ring buffer of the last indexes of unacknowledged appends. */
export class Inflights {
  private start = 0;
  count = 0;
  private buffer: number[] = [];

  constructor(readonly size: number) {}

  /** Records an append whose last entry is `inflight`. */
  add(inflight: number): void {
    if (this.full()) throw new Error('cannot add into a full inflights');
    let next = this.start + this.count;
    if (next >= this.size) next -= this.size;
    if (next >= this.buffer.length) this.buffer.push(inflight);
    else this.buffer[next] = inflight;
    this.count++;
  }

  /** Frees every append whose last index is <= to. */
  freeLE(to: number): void {
    if (this.count === 0 || to < this.buffer[this.start]) return;
    let idx = this.start;
    let i = 0;
    for (; i < this.count; i++) {
      if (to < this.buffer[idx]) break;
      idx++;
      if (idx >= this.size) idx -= this.size;
    }
    this.count -= i;
    this.start = idx;
    if (this.count === 0) this.start = 0;
  }

  /** Frees the oldest append (a heartbeat response proves the follower is alive). */
  freeFirstOne(): void {
    if (this.count > 0) this.freeLE(this.buffer[this.start]);
  }

  full(): boolean {
    return this.count === this.size;
  }

  reset(): void {
    this.count = 0;
    this.start = 0;
  }
}

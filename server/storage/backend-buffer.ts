// The not-yet-committed writes of one bucket. Reads merge this buffer over the committed data so a write
// is visible at once even though it reaches the database file only at the next batch commit.

/** One pending change: a new value, or null for a delete. */
export interface PendingEntry {
  key: Uint8Array;
  value: Uint8Array | null;
}

/** The first index of sorted byte-string keys `arr` whose key is >= `key` (arr.length when none is). */
export function lowerBound(arr: readonly string[], key: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Latin-1 strings compare byte-wise, so they serve as ordered map keys for byte strings. */
export function bytesToKey(b: Uint8Array): string {
  // Plain char codes: cheaper than a Buffer view plus toString for the short keys that dominate.
  const n = b.length;
  let out = '';
  if (n <= 64) {
    for (let i = 0; i < n; i++) out += String.fromCharCode(b[i]);
    return out;
  }
  for (let i = 0; i < n; i += 8192) {
    out += String.fromCharCode.apply(null, b.subarray(i, Math.min(n, i + 8192)) as unknown as number[]);
  }
  return out;
}

/** Pending writes of one bucket: a map for point reads, plus lazily sorted keys for range merges. */
export class BucketBuffer {
  readonly entries = new Map<string, PendingEntry>();
  private sorted: string[] = [];
  private sortedValid = true;

  /** Records a put (value) or delete (null); the key is copied unless `own` (the caller hands it over). */
  set(key: Uint8Array, value: Uint8Array | null, own = false): void {
    const k = bytesToKey(key);
    const had = this.entries.has(k);
    this.entries.set(k, { key: own ? key : Uint8Array.from(key), value });
    if (had) return;
    // Revisions are written in increasing order, so the common case is an append.
    if (this.sortedValid && (this.sorted.length === 0 || this.sorted[this.sorted.length - 1] < k)) {
      this.sorted.push(k);
    } else {
      this.sorted.push(k);
      this.sortedValid = false;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** Buffered keys in [start, end) (end undefined: unbounded), in byte order. */
  keysInRange(start: string, end: string | undefined): string[] {
    if (!this.sortedValid) {
      this.sorted.sort();
      this.sortedValid = true;
    }
    const s = this.sorted;
    const lo = lowerBound(s, start);
    const out: string[] = [];
    for (let i = lo; i < s.length; i++) {
      if (end !== undefined && s[i] >= end) break;
      out.push(s[i]);
    }
    return out;
  }

  clear(): void {
    this.entries.clear();
    this.sorted = [];
    this.sortedValid = true;
  }
}

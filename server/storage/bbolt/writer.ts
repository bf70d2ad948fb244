// Writes a bbolt file (the reference's database and snapshot format): buckets in, pages out. Pages are allocated
// in order as the data arrives (leaves as they fill, then each bucket's branch levels, then the root bucket),
// so a large database is written to a sink page by page without a second copy in memory; writeBolt is the
// in-memory convenience form. The result is compact: no free pages, an empty freelist page at page 2.
import {
  BRANCH_PAGE,
  BUCKET_HEADER_SIZE,
  BUCKET_LEAF_FLAG,
  DEFAULT_PAGE_SIZE,
  ELEMENT_SIZE,
  encodeMeta,
  encodePageHeader,
  FREELIST_PAGE,
  LEAF_PAGE,
  META_PAGE,
  PAGE_HEADER_SIZE,
} from './page.js';

/** Where pages go: `data` is a whole number of pages and belongs at byte pgid * pageSize. */
export interface PageSink {
  write(pgid: number, data: Buffer): void;
}

/** The largest key bbolt accepts, and the largest value. */
export const MAX_KEY_SIZE = 32768;
export const MAX_VALUE_SIZE = 2 ** 31 - 2;
const FREELIST_PGID = 2;

interface LeafEntry {
  key: Uint8Array;
  value: Uint8Array;
  flags: number;
}

/** Allocates page ids in order and hands finished pages to the sink. */
export class BoltFileWriter {
  private next = FREELIST_PGID + 1;
  private finished = false;

  constructor(
    private readonly sink: PageSink,
    readonly pageSize = DEFAULT_PAGE_SIZE,
  ) {}

  /** Pages used so far (the high-water mark). */
  get pages(): number {
    return this.next;
  }

  /** Writes a node of `size` bytes (filled by `fill` at offset 0 of a zeroed buffer) to new pages; returns its pgid. */
  writeNode(size: number, fill: (buf: Buffer, pgid: number, overflow: number) => void): number {
    const n = Math.max(1, Math.ceil(size / this.pageSize));
    const pgid = this.next;
    this.next += n;
    const buf = Buffer.alloc(n * this.pageSize);
    fill(buf, pgid, n - 1);
    this.sink.write(pgid, buf);
    return pgid;
  }

  /** A writer for one bucket's entries (given in strictly ascending key order). */
  bucket(): BucketWriter {
    return new BucketWriter(this);
  }

  /**
   * Writes the root bucket (holding `buckets`, name -> value from BucketWriter.finish, in name order), the
   * freelist and both meta pages. Returns the file's length in bytes.
   */
  finish(buckets: Iterable<{ name: Uint8Array; value: Uint8Array }>, txid = 2n): number {
    if (this.finished) throw new Error('bbolt writer: finish called twice');
    const root = new BucketWriter(this);
    for (const b of buckets) root.putBucket(b.name, b.value);
    const rootPgid = root.finishRoot();
    this.finished = true;
    // the freelist: empty, as every page below the high-water mark is in use
    const fl = Buffer.alloc(this.pageSize);
    encodePageHeader(fl, 0, FREELIST_PGID, FREELIST_PAGE, 0, 0);
    this.sink.write(FREELIST_PGID, fl);
    // two identical metas but for the txid; bbolt writes transaction t's meta to page t % 2
    for (const id of [0, 1]) {
      const page = Buffer.alloc(this.pageSize);
      encodePageHeader(page, 0, id, META_PAGE, 0, 0);
      const t = txid - BigInt((Number(txid % 2n) + 2 - id) % 2);
      encodeMeta(page, PAGE_HEADER_SIZE, { pageSize: this.pageSize, flags: 0, root: rootPgid, sequence: 0n, freelist: FREELIST_PGID, pgid: this.next, txid: t });
      this.sink.write(id, page);
    }
    return this.next * this.pageSize;
  }
}

/**
 * One bucket's B+tree, built bottom-up: leaves fill to a page (a larger element gets a node of its own with
 * overflow pages), then branch levels over them until one root remains. A bucket small enough (no nested
 * buckets, at most a quarter page) is stored inline in its parent's leaf, as bbolt does.
 */
export class BucketWriter {
  private entries: LeafEntry[] = [];
  private size = PAGE_HEADER_SIZE;
  private hasNested = false;
  /** The first key and pgid of every leaf written so far. */
  private level: Array<{ key: Uint8Array; pgid: number }> = [];
  private last: Uint8Array | undefined;

  constructor(private readonly w: BoltFileWriter) {}

  put(key: Uint8Array, value: Uint8Array): void {
    this.add({ key, value, flags: 0 });
  }

  /** A nested bucket: `value` is what its BucketWriter.finish returned. */
  putBucket(key: Uint8Array, value: Uint8Array): void {
    this.hasNested = true;
    this.add({ key, value, flags: BUCKET_LEAF_FLAG });
  }

  private add(e: LeafEntry): void {
    if (e.key.byteLength === 0) throw new Error('bbolt writer: empty key');
    if (e.key.byteLength > MAX_KEY_SIZE) throw new Error(`bbolt writer: key of ${e.key.byteLength} bytes (at most ${MAX_KEY_SIZE})`);
    if (e.value.byteLength > MAX_VALUE_SIZE) throw new Error(`bbolt writer: value of ${e.value.byteLength} bytes (at most ${MAX_VALUE_SIZE})`);
    if (this.last && Buffer.compare(this.last, e.key) >= 0) throw new Error('bbolt writer: keys must be given in strictly ascending byte order');
    this.last = e.key;
    const esz = ELEMENT_SIZE + e.key.byteLength + e.value.byteLength;
    if (this.entries.length > 0 && this.size + esz > this.w.pageSize) this.flushLeaf();
    this.entries.push(e);
    this.size += esz;
  }

  private flushLeaf(): void {
    const entries = this.entries;
    const pgid = this.w.writeNode(this.size, (buf, id, overflow) => {
      encodePageHeader(buf, 0, id, LEAF_PAGE, entries.length, overflow);
      writeLeafElements(buf, 0, entries);
    });
    this.level.push({ key: entries[0]?.key ?? new Uint8Array(0), pgid });
    this.entries = [];
    this.size = PAGE_HEADER_SIZE;
  }

  /** Finishes the bucket; returns its value for the parent's leaf (a bucket header, plus the page when inline). */
  finish(sequence = 0n): Buffer {
    if (this.level.length === 0 && !this.hasNested && this.size <= this.w.pageSize / 4) {
      const out = Buffer.alloc(BUCKET_HEADER_SIZE + this.size);
      out.writeBigUInt64LE(0n, 0);
      out.writeBigUInt64LE(sequence, 8);
      encodePageHeader(out, BUCKET_HEADER_SIZE, 0, LEAF_PAGE, this.entries.length, 0);
      writeLeafElements(out, BUCKET_HEADER_SIZE, this.entries);
      return out;
    }
    const out = Buffer.alloc(BUCKET_HEADER_SIZE);
    out.writeBigUInt64LE(BigInt(this.finishRoot()), 0);
    out.writeBigUInt64LE(sequence, 8);
    return out;
  }

  /** Writes the remaining leaf and the branch levels; returns the root page. */
  finishRoot(): number {
    if (this.entries.length > 0 || this.level.length === 0) this.flushLeaf();
    let level = this.level;
    while (level.length > 1) {
      const up: Array<{ key: Uint8Array; pgid: number }> = [];
      let i = 0;
      while (i < level.length) {
        let size = PAGE_HEADER_SIZE;
        let j = i;
        while (j < level.length && (j === i || size + ELEMENT_SIZE + level[j].key.byteLength <= this.w.pageSize)) {
          size += ELEMENT_SIZE + level[j].key.byteLength;
          j++;
        }
        const els = level.slice(i, j);
        const pgid = this.w.writeNode(size, (buf, id, overflow) => {
          encodePageHeader(buf, 0, id, BRANCH_PAGE, els.length, overflow);
          let data = PAGE_HEADER_SIZE + els.length * ELEMENT_SIZE;
          els.forEach((el, k) => {
            const e = PAGE_HEADER_SIZE + k * ELEMENT_SIZE;
            buf.writeUInt32LE(data - e, e);
            buf.writeUInt32LE(el.key.byteLength, e + 4);
            buf.writeBigUInt64LE(BigInt(el.pgid), e + 8);
            buf.set(el.key, data);
            data += el.key.byteLength;
          });
        });
        up.push({ key: els[0].key, pgid });
        i = j;
      }
      level = up;
    }
    return level[0].pgid;
  }
}

/** Leaf element headers, then each key and value, in the page (or inline value) starting at `base`. */
function writeLeafElements(buf: Buffer, base: number, entries: LeafEntry[]): void {
  let data = base + PAGE_HEADER_SIZE + entries.length * ELEMENT_SIZE;
  entries.forEach((en, i) => {
    const e = base + PAGE_HEADER_SIZE + i * ELEMENT_SIZE;
    buf.writeUInt32LE(en.flags, e);
    buf.writeUInt32LE(data - e, e + 4);
    buf.writeUInt32LE(en.key.byteLength, e + 8);
    buf.writeUInt32LE(en.value.byteLength, e + 12);
    buf.set(en.key, data);
    data += en.key.byteLength;
    buf.set(en.value, data);
    data += en.value.byteLength;
  });
}

/** A bucket to write: key/values and nested buckets (names must not collide with keys). */
export interface BoltBucketInput {
  name: Uint8Array;
  kvs: Array<{ key: Uint8Array; value: Uint8Array }>;
  buckets?: BoltBucketInput[];
  sequence?: bigint;
}

const byKey = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b);

function writeBucket(w: BoltFileWriter, b: BoltBucketInput): Buffer {
  const bw = w.bucket();
  const kvs = [...b.kvs].sort((x, y) => byKey(x.key, y.key));
  const nested = [...(b.buckets ?? [])].sort((x, y) => byKey(x.name, y.name));
  let i = 0;
  let j = 0;
  while (i < kvs.length || j < nested.length) {
    if (j >= nested.length || (i < kvs.length && byKey(kvs[i].key, nested[j].name) < 0)) {
      bw.put(kvs[i].key, kvs[i].value);
      i++;
    } else {
      bw.putBucket(nested[j].name, writeBucket(w, nested[j]));
      j++;
    }
  }
  return bw.finish(b.sequence ?? 0n);
}

/** A whole bbolt file holding `buckets` (sorted here; keys must be unique within a bucket). */
export function writeBolt(buckets: BoltBucketInput[], pageSize = DEFAULT_PAGE_SIZE): Buffer {
  const pages = new Map<number, Buffer>();
  const w = new BoltFileWriter({ write: (pgid, data) => void pages.set(pgid, data) }, pageSize);
  const sorted = [...buckets].sort((x, y) => byKey(x.name, y.name));
  const values = sorted.map((b) => ({ name: b.name, value: writeBucket(w, b) }));
  const len = w.finish(values);
  const out = Buffer.alloc(len);
  for (const [pgid, data] of pages) data.copy(out, pgid * pageSize);
  return out;
}

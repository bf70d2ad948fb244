// Reads a bbolt file (the reference's database and snapshot format) from a Buffer: the valid meta page with the
// higher txid, then the tree of buckets from its root. Pages that nothing reachable points at (freed pages,
// listed in the freelist or not) are never visited. checkBolt repeats the consistency checks the reference's
// `snapshot status` runs, so tests can hold our writer to them.
import {
  BoltFormatError,
  BRANCH_PAGE,
  BUCKET_HEADER_SIZE,
  BUCKET_LEAF_FLAG,
  DEFAULT_PAGE_SIZE,
  decodeMeta,
  ELEMENT_SIZE,
  FREELIST_COUNT_OVERFLOW,
  FREELIST_PAGE,
  LEAF_PAGE,
  metaProblem,
  PAGE_HEADER_SIZE,
  type Meta,
} from './page.js';

export interface BoltKv {
  key: Buffer;
  value: Buffer;
}

/** A bucket: its plain key/values and nested buckets, each in key order. */
export interface BoltBucket {
  name: Buffer;
  sequence: bigint;
  kvs: BoltKv[];
  buckets: BoltBucket[];
}

export interface BoltFile {
  meta: Meta;
  /** The top-level buckets in name order. */
  buckets: BoltBucket[];
}

/** The meta bbolt would open with: the valid one of the two with the higher txid. */
export function readMeta(buf: Buffer): Meta {
  const problems: string[] = [];
  const metas: Meta[] = [];
  const p0 = metaProblem(buf, PAGE_HEADER_SIZE);
  if (p0) problems.push(`meta page 0: ${p0}`);
  else metas.push(decodeMeta(buf, PAGE_HEADER_SIZE));
  // page 1 sits one page further; without a valid page 0, assume the default page size (as the reference does)
  const pageSize = metas[0]?.pageSize ?? DEFAULT_PAGE_SIZE;
  const p1 = metaProblem(buf, pageSize + PAGE_HEADER_SIZE);
  if (p1) problems.push(`meta page 1: ${p1}`);
  else metas.push(decodeMeta(buf, pageSize + PAGE_HEADER_SIZE));
  if (metas.length === 0) throw new BoltFormatError(`not a valid bbolt database: ${problems.join('; ')}`);
  const m = metas.reduce((a, b) => (b.txid > a.txid ? b : a));
  if (m.pageSize < 512 || m.pageSize > 1 << 20 || (m.pageSize & (m.pageSize - 1)) !== 0) throw new BoltFormatError(`invalid page size ${m.pageSize}`);
  if (m.pgid * m.pageSize > buf.length) throw new BoltFormatError(`file is truncated: ${buf.length} bytes, the meta needs ${m.pgid * m.pageSize}`);
  return m;
}

interface PageRef {
  /** The buffer the page lives in (the file, or an inline bucket's value). */
  buf: Buffer;
  off: number;
  id: number;
  flags: number;
  count: number;
  overflow: number;
}

class Reader {
  constructor(
    readonly buf: Buffer,
    readonly meta: Meta,
  ) {}

  page(id: number): PageRef {
    if (id < 2 || id >= this.meta.pgid) throw new BoltFormatError(`page ${id}: out of bounds (high-water mark ${this.meta.pgid})`);
    const off = id * this.meta.pageSize;
    const p = header(this.buf, off);
    if (p.id !== id) throw new BoltFormatError(`page ${id}: header says page ${p.id}`);
    if ((id + p.overflow + 1) * this.meta.pageSize > this.buf.length) throw new BoltFormatError(`page ${id}: overflow ${p.overflow} runs past the end of the file`);
    return p;
  }

  /** Calls fn for every page of the tree at `root`, parents before children. */
  forEachPage(root: number, fn: (p: PageRef) => void, depth = 0): void {
    if (depth > 64) throw new BoltFormatError(`page ${root}: tree too deep (a cycle?)`);
    const p = this.page(root);
    fn(p);
    if (p.flags & BRANCH_PAGE) for (const el of branchElements(p)) this.forEachPage(el.pgid, fn, depth + 1);
    else if (!(p.flags & LEAF_PAGE)) throw new BoltFormatError(`page ${root}: invalid type ${p.flags.toString(16)} in a bucket`);
  }

  /** The leaf elements of a bucket in key order. */
  leaves(root: number, inline: PageRef | undefined, fn: (flags: number, key: Buffer, value: Buffer) => void): void {
    if (inline) {
      for (const el of leafElements(inline)) fn(el.flags, el.key, el.value);
      return;
    }
    this.forEachPage(root, (p) => {
      if (p.flags & LEAF_PAGE) for (const el of leafElements(p)) fn(el.flags, el.key, el.value);
    });
  }

  bucket(name: Buffer, value: Buffer, depth: number): BoltBucket {
    if (value.length < BUCKET_HEADER_SIZE) throw new BoltFormatError(`bucket ${name.toString('latin1')}: value too short for a bucket header`);
    const root = Number(value.readBigUInt64LE(0));
    const sequence = value.readBigUInt64LE(8);
    const inline = root === 0 ? inlinePage(value) : undefined;
    return this.bucketAt(name, root, sequence, inline, depth);
  }

  bucketAt(name: Buffer, root: number, sequence: bigint, inline: PageRef | undefined, depth: number): BoltBucket {
    if (depth > 64) throw new BoltFormatError('buckets nested too deep');
    const b: BoltBucket = { name, sequence, kvs: [], buckets: [] };
    this.leaves(root, inline, (flags, key, value) => {
      if (flags & BUCKET_LEAF_FLAG) b.buckets.push(this.bucket(key, value, depth + 1));
      else b.kvs.push({ key, value });
    });
    return b;
  }
}

function header(buf: Buffer, off: number): PageRef {
  if (off + PAGE_HEADER_SIZE > buf.length) throw new BoltFormatError(`page at byte ${off}: past the end of the data`);
  const id = buf.readBigUInt64LE(off);
  return {
    buf,
    off,
    id: id > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(id),
    flags: buf.readUInt16LE(off + 8),
    count: buf.readUInt16LE(off + 10),
    overflow: buf.readUInt32LE(off + 12),
  };
}

function slice(buf: Buffer, start: number, len: number, what: string): Buffer {
  if (start < 0 || start + len > buf.length) throw new BoltFormatError(`${what} runs past the end of its page`);
  return buf.subarray(start, start + len);
}

function branchElements(p: PageRef): Array<{ key: Buffer; pgid: number }> {
  const out: Array<{ key: Buffer; pgid: number }> = [];
  for (let i = 0; i < p.count; i++) {
    const e = p.off + PAGE_HEADER_SIZE + i * ELEMENT_SIZE;
    const pos = p.buf.readUInt32LE(e);
    const ksize = p.buf.readUInt32LE(e + 4);
    out.push({ key: slice(p.buf, e + pos, ksize, `page ${p.id}: branch element ${i}`), pgid: Number(p.buf.readBigUInt64LE(e + 8)) });
  }
  return out;
}

function leafElements(p: PageRef): Array<{ flags: number; key: Buffer; value: Buffer }> {
  const out: Array<{ flags: number; key: Buffer; value: Buffer }> = [];
  for (let i = 0; i < p.count; i++) {
    const e = p.off + PAGE_HEADER_SIZE + i * ELEMENT_SIZE;
    if (e + ELEMENT_SIZE > p.buf.length) throw new BoltFormatError(`page ${p.id}: leaf element ${i} past the end of the data`);
    const flags = p.buf.readUInt32LE(e);
    const pos = p.buf.readUInt32LE(e + 4);
    const ksize = p.buf.readUInt32LE(e + 8);
    const vsize = p.buf.readUInt32LE(e + 12);
    const what = `page ${p.id}: leaf element ${i}`;
    out.push({ flags, key: slice(p.buf, e + pos, ksize, what), value: slice(p.buf, e + pos + ksize, vsize, what) });
  }
  return out;
}

/** An inline bucket's value: the bucket header, then a leaf page (header and elements) of its own. */
function inlinePage(value: Buffer): PageRef {
  const page = value.subarray(BUCKET_HEADER_SIZE);
  const p = header(page, 0);
  if (p.count > 0 && !(p.flags & LEAF_PAGE)) throw new BoltFormatError(`inline bucket: page flags ${p.flags.toString(16)} are not a leaf's`);
  return p;
}

/** Reads every bucket of a bbolt file. Keys and values are views into `buf`. */
export function readBolt(buf: Buffer): BoltFile {
  const meta = readMeta(buf);
  const r = new Reader(buf, meta);
  const root = r.bucketAt(Buffer.alloc(0), meta.root, meta.sequence, undefined, 0);
  if (root.kvs.length > 0) throw new BoltFormatError(`the root bucket holds ${root.kvs.length} plain key(s); only buckets belong there`);
  return { meta, buckets: root.buckets };
}

/** The page ids on the freelist (empty when the file has none: then every unreachable page counts as free). */
export function readFreelist(buf: Buffer, meta: Meta = readMeta(buf)): number[] {
  if (meta.freelist === null) return [];
  const r = new Reader(buf, meta);
  const p = r.page(meta.freelist);
  if (!(p.flags & FREELIST_PAGE)) throw new BoltFormatError(`page ${meta.freelist}: the freelist page has flags ${p.flags.toString(16)}`);
  let count = p.count;
  let at = p.off + PAGE_HEADER_SIZE;
  if (count === FREELIST_COUNT_OVERFLOW) {
    count = Number(buf.readBigUInt64LE(at));
    at += 8;
  }
  if (at + count * 8 > buf.length) throw new BoltFormatError(`page ${meta.freelist}: ${count} free ids run past the end of the file`);
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push(Number(buf.readBigUInt64LE(at + i * 8)));
  return ids;
}

/** Pages below the high-water mark that no bucket, meta or freelist uses (free pages, listed or not). */
export function unusedPages(buf: Buffer): number[] {
  const meta = readMeta(buf);
  const r = new Reader(buf, meta);
  const used = new Set<number>([0, 1]);
  if (meta.freelist !== null) {
    const p = r.page(meta.freelist);
    for (let i = 0; i <= p.overflow; i++) used.add(meta.freelist + i);
  }
  const visit = (root: number, inline: PageRef | undefined): void => {
    if (!inline) r.forEachPage(root, (p) => {
      for (let i = 0; i <= p.overflow; i++) used.add(p.id + i);
    });
    r.leaves(root, inline, (flags, _key, value) => {
      if (!(flags & BUCKET_LEAF_FLAG)) return;
      const root2 = Number(value.readBigUInt64LE(0));
      visit(root2, root2 === 0 ? inlinePage(value) : undefined);
    });
  };
  visit(meta.root, undefined);
  const out: number[] = [];
  for (let i = 0; i < meta.pgid; i++) if (!used.has(i)) out.push(i);
  return out;
}

/**
 * The reference's consistency check (what `snapshot status` runs before reading): no page freed twice, every
 * page of every bucket in bounds, of a bucket type, referenced once and not free, and every page below the
 * high-water mark either reachable or free. Also: keys strictly ascending in every bucket. Returns the problems.
 */
export function checkBolt(buf: Buffer): string[] {
  const errs: string[] = [];
  let meta: Meta;
  try {
    meta = readMeta(buf);
  } catch (e) {
    return [(e as Error).message];
  }
  const r = new Reader(buf, meta);
  const freed = new Set<number>();
  try {
    for (const id of readFreelist(buf, meta)) {
      if (freed.has(id)) errs.push(`page ${id}: already freed`);
      freed.add(id);
    }
  } catch (e) {
    errs.push((e as Error).message);
  }
  const reachable = new Set<number>([0, 1]);
  if (meta.freelist !== null) {
    try {
      const p = r.page(meta.freelist);
      for (let i = 0; i <= p.overflow; i++) reachable.add(meta.freelist + i);
    } catch (e) {
      errs.push((e as Error).message);
    }
  }
  const visit = (root: number, inline: PageRef | undefined, name: string, depth: number): void => {
    if (!inline) {
      r.forEachPage(root, (p) => {
        for (let i = 0; i <= p.overflow; i++) {
          const id = p.id + i;
          if (reachable.has(id)) errs.push(`page ${id}: multiple references`);
          if (freed.has(id)) errs.push(`page ${id}: reachable freed`);
          reachable.add(id);
        }
      });
    }
    let prev: Buffer | undefined;
    r.leaves(root, inline, (flags, key, value) => {
      if (prev && Buffer.compare(prev, key) >= 0) errs.push(`bucket ${name}: keys out of order (${prev.toString('hex')} then ${key.toString('hex')})`);
      prev = key;
      if (flags & BUCKET_LEAF_FLAG) {
        const root2 = Number(value.readBigUInt64LE(0));
        visit(root2, root2 === 0 ? inlinePage(value) : undefined, `${name}/${key.toString('latin1')}`, depth + 1);
      }
    });
  };
  try {
    visit(meta.root, undefined, '', 0);
  } catch (e) {
    errs.push((e as Error).message);
  }
  if (meta.freelist !== null) {
    for (let i = 0; i < meta.pgid; i++) if (!reachable.has(i) && !freed.has(i)) errs.push(`page ${i}: unreachable unfreed`);
  }
  return errs;
}

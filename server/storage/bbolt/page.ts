// The on-disk layout shared by the reader and the writer: bbolt's page header, meta page and element headers
// (facts from the reference's storage library: little-endian fields, 16-byte page header, 16-byte elements).

export const DEFAULT_PAGE_SIZE = 4096;
export const PAGE_HEADER_SIZE = 16;
/** Both element kinds are 16 bytes: branch {pos u32, ksize u32, pgid u64}, leaf {flags u32, pos u32, ksize u32, vsize u32}. */
export const ELEMENT_SIZE = 16;
/** A bucket's header as stored in its parent's leaf: {root pgid u64, sequence u64}. */
export const BUCKET_HEADER_SIZE = 16;

export const BRANCH_PAGE = 0x01;
export const LEAF_PAGE = 0x02;
export const META_PAGE = 0x04;
export const FREELIST_PAGE = 0x10;
/** A leaf element flag: the value is a nested bucket. */
export const BUCKET_LEAF_FLAG = 0x01;

export const MAGIC = 0xed0cdaed;
export const VERSION = 2;
/** meta.freelist when the freelist was not written (the reference's etcd runs that way). */
export const NO_FREELIST = 0xffffffffffffffffn;
/** A freelist page whose element count does not fit in the 16-bit count: the count is the first u64 of the data. */
export const FREELIST_COUNT_OVERFLOW = 0xffff;
/** Bytes of the meta covered by its checksum (everything before the checksum field). */
const META_CHECKSUM_OFFSET = 56;
export const META_SIZE = 64;

export interface Meta {
  magic: number;
  version: number;
  pageSize: number;
  flags: number;
  /** The root bucket's page and sequence. */
  root: number;
  sequence: bigint;
  /** The freelist's page, or null when the file has none (NO_FREELIST). */
  freelist: number | null;
  /** The high-water mark: pages [0, pgid) make up the file. */
  pgid: number;
  txid: bigint;
  checksum: bigint;
}

/** FNV-1a, 64 bit. */
export function fnv1a64(b: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const c of b) h = BigInt.asUintN(64, (h ^ BigInt(c)) * 0x100000001b3n);
  return h;
}

function toNumber(v: bigint, what: string): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new BoltFormatError(`${what} ${v} is out of range`);
  return Number(v);
}

export class BoltFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BoltFormatError';
  }
}

/** Decodes the meta at `off` (the start of a meta page's data). */
export function decodeMeta(buf: Buffer, off: number): Meta {
  const freelist = buf.readBigUInt64LE(off + 32);
  return {
    magic: buf.readUInt32LE(off),
    version: buf.readUInt32LE(off + 4),
    pageSize: buf.readUInt32LE(off + 8),
    flags: buf.readUInt32LE(off + 12),
    root: toNumber(buf.readBigUInt64LE(off + 16), 'root page'),
    sequence: buf.readBigUInt64LE(off + 24),
    freelist: freelist === NO_FREELIST ? null : toNumber(freelist, 'freelist page'),
    pgid: toNumber(buf.readBigUInt64LE(off + 40), 'high-water mark'),
    txid: buf.readBigUInt64LE(off + 48),
    checksum: buf.readBigUInt64LE(off + 56),
  };
}

/** Why the meta at `off` is not valid, or undefined when it is. */
export function metaProblem(buf: Buffer, off: number): string | undefined {
  if (off + META_SIZE > buf.length) return 'file too short for a meta page';
  const m = decodeMeta(buf, off);
  if (m.magic !== MAGIC) return 'invalid database (bad magic)';
  if (m.version !== VERSION) return `version mismatch (${m.version}, want ${VERSION})`;
  if (m.checksum !== fnv1a64(buf.subarray(off, off + META_CHECKSUM_OFFSET))) return 'checksum error';
  return undefined;
}

/** Encodes a meta (its checksum computed) into `buf` at `off`. */
export function encodeMeta(buf: Buffer, off: number, m: Omit<Meta, 'checksum' | 'magic' | 'version'>): void {
  buf.writeUInt32LE(MAGIC, off);
  buf.writeUInt32LE(VERSION, off + 4);
  buf.writeUInt32LE(m.pageSize, off + 8);
  buf.writeUInt32LE(m.flags, off + 12);
  buf.writeBigUInt64LE(BigInt(m.root), off + 16);
  buf.writeBigUInt64LE(m.sequence, off + 24);
  buf.writeBigUInt64LE(m.freelist === null ? NO_FREELIST : BigInt(m.freelist), off + 32);
  buf.writeBigUInt64LE(BigInt(m.pgid), off + 40);
  buf.writeBigUInt64LE(m.txid, off + 48);
  buf.writeBigUInt64LE(fnv1a64(buf.subarray(off, off + META_CHECKSUM_OFFSET)), off + 56);
}

/** Writes a page header at `off`. */
export function encodePageHeader(buf: Buffer, off: number, id: number, flags: number, count: number, overflow: number): void {
  buf.writeBigUInt64LE(BigInt(id), off);
  buf.writeUInt16LE(flags, off + 8);
  buf.writeUInt16LE(count, off + 10);
  buf.writeUInt32LE(overflow, off + 12);
}

/** Is `buf` (at least its first page) a bbolt file? Checks meta page 0's magic at byte 16. */
export function looksLikeBolt(buf: Buffer): boolean {
  return buf.length >= PAGE_HEADER_SIZE + 4 && buf.readUInt32LE(PAGE_HEADER_SIZE) === MAGIC;
}

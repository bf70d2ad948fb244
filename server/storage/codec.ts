// Compact binary encodings of the consensus types that the WAL and the snapshot files persist.
// Numbers (terms, indexes) are unsigned LEB128 varints: a log index costs 1-8 bytes instead of a
// JSON string. Member ids are random 64-bit values, so they are stored as fixed 8-byte little-endian.
// Every encoding starts with a version byte so the format can evolve without guessing.
import type { ConfState, Entry, HardState, Snapshot } from '../raft/types.js';
import { CodedError } from '../coded-error.js';

const FORMAT_VERSION = 1;

/** A snapshot marker as the WAL records it (mirrors WalSnapshotMarker in wal.ts). */
export interface MarkerData {
  index: number;
  term: number;
  confState?: ConfState;
}

/** Raised when bytes do not decode (truncated, unknown version, trailing garbage). */
export class CodecError extends CodedError<'CODEC_INVALID'> {
  constructor(message: string) {
    super('CODEC_INVALID', message);
  }
}

/** Appends primitive values to a growing buffer. */
export class ByteWriter {
  private buf: Buffer;
  private len = 0;

  constructor(initial = 64) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  u8(v: number): this {
    this.reserve(1);
    this.buf[this.len++] = v & 0xff;
    return this;
  }

  /** Unsigned varint for any safe non-negative integer (up to 2^53 - 1). */
  uvarint(v: number): this {
    if (!Number.isSafeInteger(v) || v < 0) throw new CodecError(`not a non-negative safe integer: ${v}`);
    this.reserve(8);
    // Division instead of shifts: JS bit operators truncate to 32 bits.
    while (v >= 0x80) {
      this.buf[this.len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.len++] = v;
    return this;
  }

  u64(v: bigint): this {
    this.reserve(8);
    this.buf.writeBigUInt64LE(BigInt.asUintN(64, v), this.len);
    this.len += 8;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.uvarint(b.length);
    this.reserve(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** `n` zero bytes. */
  zeros(n: number): this {
    this.reserve(n);
    this.buf.fill(0, this.len, this.len + n);
    this.len += n;
    return this;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.len;
  }

  /** The bytes written so far, a view valid until the next write (which may move them). */
  view(): Buffer {
    return this.buf.subarray(0, this.len);
  }

  /** Starts over in the same memory (a view taken before is overwritten by later writes). */
  reset(): void {
    this.len = 0;
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}

/** Reads what ByteWriter wrote, throwing CodecError on truncation. */
export class ByteReader {
  private pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new CodecError('truncated encoding');
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  uvarint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        if (!Number.isSafeInteger(result)) throw new CodecError('varint out of range');
        return result;
      }
      scale *= 0x80;
    }
    throw new CodecError('varint too long');
  }

  u64(): bigint {
    this.need(8);
    const view = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8);
    this.pos += 8;
    return view.getBigUint64(0, true);
  }

  bytes(): Uint8Array {
    const n = this.uvarint();
    this.need(n);
    // Copy so the result does not pin (or alias) a whole segment read buffer.
    const out = new Uint8Array(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return out;
  }

  version(): void {
    const v = this.u8();
    if (v !== FORMAT_VERSION) throw new CodecError(`unknown encoding version ${v}`);
  }

  end(): void {
    if (this.pos !== this.buf.length) throw new CodecError(`${this.buf.length - this.pos} trailing bytes`);
  }
}

function writeConfState(w: ByteWriter, cs: ConfState): void {
  w.uvarint(cs.voters.length);
  for (const id of cs.voters) w.u64(id);
  w.uvarint(cs.learners.length);
  for (const id of cs.learners) w.u64(id);
}

function readConfState(r: ByteReader): ConfState {
  const voters: bigint[] = [];
  for (let n = r.uvarint(); n > 0; n--) voters.push(r.u64());
  const learners: bigint[] = [];
  for (let n = r.uvarint(); n > 0; n--) learners.push(r.u64());
  return { voters, learners };
}

/** Appends an entry's encoding to `w`. */
export function writeEntry(w: ByteWriter, e: Entry): ByteWriter {
  return w.u8(FORMAT_VERSION).u8(e.type).uvarint(e.term).uvarint(e.index).bytes(e.data);
}

/** Entry -> bytes. */
export function encodeEntry(e: Entry): Buffer {
  return writeEntry(new ByteWriter(16 + e.data.length), e).finish();
}

/** bytes -> Entry. */
export function decodeEntry(b: Uint8Array): Entry {
  const r = new ByteReader(b);
  r.version();
  const type = r.u8();
  if (type !== 0 && type !== 1) throw new CodecError(`unknown entry type ${type}`);
  const term = r.uvarint();
  const index = r.uvarint();
  const data = r.bytes();
  r.end();
  return { term, index, type, data };
}

/** Appends a hard state's encoding to `w`. */
export function writeHardState(w: ByteWriter, h: HardState): ByteWriter {
  return w.u8(FORMAT_VERSION).uvarint(h.term).u64(h.vote).uvarint(h.commit);
}

/** HardState -> bytes. */
export function encodeHardState(h: HardState): Buffer {
  return writeHardState(new ByteWriter(24), h).finish();
}

/** bytes -> HardState. */
export function decodeHardState(b: Uint8Array): HardState {
  const r = new ByteReader(b);
  r.version();
  const h = { term: r.uvarint(), vote: r.u64(), commit: r.uvarint() };
  r.end();
  return h;
}

/** ConfState -> bytes. */
export function encodeConfState(cs: ConfState): Buffer {
  const w = new ByteWriter().u8(FORMAT_VERSION);
  writeConfState(w, cs);
  return w.finish();
}

/** bytes -> ConfState. */
export function decodeConfState(b: Uint8Array): ConfState {
  const r = new ByteReader(b);
  r.version();
  const cs = readConfState(r);
  r.end();
  return cs;
}

/** Appends a WAL snapshot marker's encoding to `w`. */
export function writeMarker(w: ByteWriter, m: MarkerData): ByteWriter {
  w.u8(FORMAT_VERSION).uvarint(m.index).uvarint(m.term);
  if (m.confState) {
    w.u8(1);
    writeConfState(w, m.confState);
  } else {
    w.u8(0);
  }
  return w;
}

/** WAL snapshot marker -> bytes. */
export function encodeMarker(m: MarkerData): Buffer {
  return writeMarker(new ByteWriter(), m).finish();
}

/** bytes -> WAL snapshot marker. */
export function decodeMarker(b: Uint8Array): MarkerData {
  const r = new ByteReader(b);
  r.version();
  const index = r.uvarint();
  const term = r.uvarint();
  const has = r.u8();
  const m: MarkerData = { index, term };
  if (has === 1) m.confState = readConfState(r);
  else if (has !== 0) throw new CodecError('bad conf state flag');
  r.end();
  return m;
}

/** Snapshot (metadata + application data) -> bytes. */
export function encodeSnapshot(s: Snapshot): Buffer {
  const w = new ByteWriter(32 + s.data.length).u8(FORMAT_VERSION).uvarint(s.metadata.index).uvarint(s.metadata.term);
  writeConfState(w, s.metadata.confState);
  return w.bytes(s.data).finish();
}

/** bytes -> Snapshot. */
export function decodeSnapshot(b: Uint8Array): Snapshot {
  const r = new ByteReader(b);
  r.version();
  const index = r.uvarint();
  const term = r.uvarint();
  const confState = readConfState(r);
  const data = r.bytes();
  r.end();
  return { metadata: { index, term, confState }, data };
}

// Framing of WAL records and the scan that tells a torn tail from real corruption.
//
// Frame (little-endian, 8-byte aligned so a zero header reliably means "nothing written here"):
//   u32 length of payload (>= 1) | u32 CRC-32 of payload | payload = u8 type + data | zero padding
// Each record carries its own checksum rather than one chained through the file (as the reference
// does): with independent checksums a reader can look past a damaged record and see whether valid
// records follow it, which is exactly the difference between a torn last write (safe to truncate)
// and damage in the middle of committed data (must refuse). Segments are still chained: every
// segment starts with a CRC record holding the checksum of the previous segment's last record.
import { ByteWriter } from './codec.js';
import { crc32 } from './crc.js';

export enum RecordType {
  Metadata = 1,
  Entry = 2,
  HardState = 3,
  Crc = 4,
  Snapshot = 5,
}

export const FRAME_HEADER_BYTES = 8;
/** Largest payload accepted; a bigger length field is damage (raft entries are ~1.5 MiB at most). */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

const ZERO_CHUNK = Buffer.alloc(64 * 1024);

function padded(n: number): number {
  return (n + 7) & ~7;
}

/** One framed record, ready to append. */
export interface Frame {
  buf: Buffer;
  crc: number;
}

/** Frames `data` as a record of `type`. */
export function encodeFrame(type: RecordType, data: Uint8Array): Frame {
  const payloadLen = 1 + data.length;
  const buf = Buffer.alloc(FRAME_HEADER_BYTES + padded(payloadLen));
  buf[FRAME_HEADER_BYTES] = type;
  buf.set(data, FRAME_HEADER_BYTES + 1);
  const crc = crc32(buf.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + payloadLen));
  buf.writeUInt32LE(payloadLen, 0);
  buf.writeUInt32LE(crc, 4);
  return { buf, crc };
}

/**
 * Frames encoded in place, one after another, into one buffer that is reused once its bytes are written: the WAL's
 * saves, without a buffer per frame or a concatenation. The bytes are encodeFrame's.
 */
export class FrameBuffer {
  private readonly w = new ByteWriter(64 * 1024);
  private start = -1;

  /** Starts a record of `type`; write its data to the writer returned, then call end(). */
  begin(type: RecordType): ByteWriter {
    this.start = this.w.length;
    return this.w.zeros(FRAME_HEADER_BYTES).u8(type);
  }

  /** Closes the record begun last: its header and padding; returns its CRC. */
  end(): number {
    const payloadLen = this.w.length - this.start - FRAME_HEADER_BYTES;
    const buf = this.w.view();
    const crc = crc32(buf.subarray(this.start + FRAME_HEADER_BYTES));
    buf.writeUInt32LE(payloadLen, this.start);
    buf.writeUInt32LE(crc, this.start + 4);
    this.w.zeros(padded(payloadLen) - payloadLen);
    return crc;
  }

  get length(): number {
    return this.w.length;
  }

  /** The frames so far; valid until the next begin() after a reset(). */
  view(): Buffer {
    return this.w.view();
  }

  reset(): void {
    this.w.reset();
  }
}

export interface DecodedRecord {
  type: RecordType;
  data: Buffer;
  crc: number;
  offset: number;
}

export interface SegmentScan {
  records: DecodedRecord[];
  /** Offset just after the last whole record. */
  end: number;
  /** Set when bytes at `end` are not a clean end of data. */
  failure?: { offset: number; reason: string; followedByValidData: boolean };
}

/** Checks the record at `pos`; returns its frame size, or a reason it is not a whole valid record. */
function frameAt(buf: Buffer, pos: number): { size: number; type: number; crc: number } | { reason: string } {
  if (pos + FRAME_HEADER_BYTES > buf.length) return { reason: 'incomplete record header' };
  const len = buf.readUInt32LE(pos);
  if (len === 0) return { reason: 'zero length' };
  if (len > MAX_RECORD_BYTES) return { reason: `impossible record length ${len}` };
  const payloadEnd = pos + FRAME_HEADER_BYTES + len;
  if (payloadEnd > buf.length) return { reason: 'incomplete record' };
  const payload = buf.subarray(pos + FRAME_HEADER_BYTES, payloadEnd);
  const type = payload[0]!;
  if (type < RecordType.Metadata || type > RecordType.Snapshot) return { reason: `unknown record type ${type}` };
  const crc = buf.readUInt32LE(pos + 4);
  if (crc32(payload) !== crc) return { reason: 'checksum mismatch' };
  return { size: FRAME_HEADER_BYTES + padded(len), type, crc };
}

function firstNonZero(buf: Buffer, from: number): number {
  for (let i = from; i < buf.length; i += ZERO_CHUNK.length) {
    const chunk = buf.subarray(i, Math.min(buf.length, i + ZERO_CHUNK.length));
    if (chunk.equals(ZERO_CHUNK.subarray(0, chunk.length))) continue;
    for (let j = 0; j < chunk.length; j++) if (chunk[j] !== 0) return i + j;
  }
  return -1;
}

/** Whether any whole, checksum-valid record starts at an aligned offset >= from. */
function validRecordAfter(buf: Buffer, from: number): boolean {
  let pos = from;
  for (;;) {
    const nz = firstNonZero(buf, pos);
    if (nz < 0) return false;
    // A header's first non-zero byte lies in its length field, so its start is nz rounded down.
    pos = Math.max(pos, nz & ~7);
    const f = frameAt(buf, pos);
    if ('size' in f) return true;
    pos += 8;
  }
}

/** Decodes every whole record of one segment's bytes and classifies what stops the scan. */
export function scanSegment(buf: Buffer): SegmentScan {
  const records: DecodedRecord[] = [];
  let pos = 0;
  for (;;) {
    if (pos >= buf.length) return { records, end: pos };
    const f = frameAt(buf, pos);
    if ('size' in f) {
      const len = buf.readUInt32LE(pos);
      records.push({
        type: f.type,
        data: buf.subarray(pos + FRAME_HEADER_BYTES + 1, pos + FRAME_HEADER_BYTES + len),
        crc: f.crc,
        offset: pos,
      });
      pos += f.size;
      continue;
    }
    const followed = validRecordAfter(buf, pos + 8);
    // Zeros up to the end are the preallocated, never-written part of the segment.
    if (!followed && firstNonZero(buf, pos) < 0) return { records, end: pos };
    return { records, end: pos, failure: { offset: pos, reason: f.reason, followedByValidData: followed } };
  }
}

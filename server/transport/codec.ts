// Binary encoding of raft Messages for the peer wire, and the length-prefixed framing used on a stream.
//
// Layout of one encoded Message (all integers little-endian; "u64" numbers are raft terms/indexes,
// which are < 2^53, written as two u32 halves so no BigInt conversion is needed on the hot path):
//   u8  format version (1)
//   u8  message type code (index into TYPE_CODES)
//   u8  flags: bit0 reject, bit1 has snapshot
//   u64 to, u64 from (NodeId, bigint)
//   u64 term, logTerm, index, commit, rejectHint
//   u32 context length, bytes
//   u32 entry count, then per entry: u64 term, u64 index, u8 type, u32 data length, bytes
//   if snapshot: u64 index, u64 term, u32 #voters, u64 each, u32 #learners, u64 each, u32 data length, bytes
//
// Stream framing: u32 payload length, then the payload (one encoded Message). A zero-length frame is a
// keepalive and carries no message.

import { EntryType, MessageType } from '../raft/types.js';
import type { Entry, Message, NodeId, Snapshot } from '../raft/types.js';
import { CodedError } from '../coded-error.js';

/** Errors raised on malformed input. */
export class CodecError extends CodedError<'ERR_TRANSPORT_CODEC'> {
  constructor(message: string) {
    super('ERR_TRANSPORT_CODEC', message);
  }
}

const FORMAT_VERSION = 1;
const FLAG_REJECT = 1;
const FLAG_SNAPSHOT = 2;
const TWO_32 = 0x1_0000_0000;

/** The wire codes of message types: position in this list. Append only; never reorder. */
const TYPE_CODES: readonly MessageType[] = [
  MessageType.Hup,
  MessageType.Beat,
  MessageType.Prop,
  MessageType.App,
  MessageType.AppResp,
  MessageType.Vote,
  MessageType.VoteResp,
  MessageType.PreVote,
  MessageType.PreVoteResp,
  MessageType.Snap,
  MessageType.Heartbeat,
  MessageType.HeartbeatResp,
  MessageType.Unreachable,
  MessageType.SnapStatus,
  MessageType.CheckQuorum,
  MessageType.TransferLeader,
  MessageType.TimeoutNow,
  MessageType.ReadIndex,
  MessageType.ReadIndexResp,
];
const TYPE_TO_CODE = new Map<MessageType, number>(TYPE_CODES.map((t, i) => [t, i]));

/** Largest frame a stream reader accepts; guards against garbage or a hostile length prefix. */
export const MAX_FRAME_BYTES = 512 * 1024 * 1024;

// Fixed part: version, type, flags, to, from, five u64 numbers, context length, entry count.
const HEADER_BYTES = 3 + 8 + 8 + 5 * 8 + 4 + 4;
const ENTRY_HEADER_BYTES = 8 + 8 + 1 + 4;

/** Bytes `encodeMessageInto` will write for `m`. */
export function encodedSize(m: Message): number {
  let n = HEADER_BYTES + m.context.byteLength;
  for (const e of m.entries) n += ENTRY_HEADER_BYTES + e.data.byteLength;
  if (m.snapshot) {
    const cs = m.snapshot.metadata.confState;
    n += 8 + 8 + 4 + cs.voters.length * 8 + 4 + cs.learners.length * 8 + 4 + m.snapshot.data.byteLength;
  }
  return n;
}

function writeNum(buf: Buffer, v: number, off: number): number {
  buf.writeUInt32LE(v >>> 0, off);
  buf.writeUInt32LE(Math.floor(v / TWO_32), off + 4);
  return off + 8;
}

function writeBytes(buf: Buffer, b: Uint8Array, off: number): number {
  buf.writeUInt32LE(b.byteLength, off);
  off += 4;
  buf.set(b, off);
  return off + b.byteLength;
}

/** Writes `m` at `off` in `buf` (which must have encodedSize(m) bytes free); returns the end offset. */
export function encodeMessageInto(m: Message, buf: Buffer, off: number): number {
  const code = TYPE_TO_CODE.get(m.type);
  if (code === undefined) throw new CodecError(`unknown message type ${String(m.type)}`);
  buf[off++] = FORMAT_VERSION;
  buf[off++] = code;
  buf[off++] = (m.reject ? FLAG_REJECT : 0) | (m.snapshot ? FLAG_SNAPSHOT : 0);
  off = buf.writeBigUInt64LE(m.to, off);
  off = buf.writeBigUInt64LE(m.from, off);
  off = writeNum(buf, m.term, off);
  off = writeNum(buf, m.logTerm, off);
  off = writeNum(buf, m.index, off);
  off = writeNum(buf, m.commit, off);
  off = writeNum(buf, m.rejectHint, off);
  off = writeBytes(buf, m.context, off);
  off = buf.writeUInt32LE(m.entries.length, off);
  for (const e of m.entries) {
    off = writeNum(buf, e.term, off);
    off = writeNum(buf, e.index, off);
    buf[off++] = e.type;
    off = writeBytes(buf, e.data, off);
  }
  if (m.snapshot) {
    const md = m.snapshot.metadata;
    off = writeNum(buf, md.index, off);
    off = writeNum(buf, md.term, off);
    off = buf.writeUInt32LE(md.confState.voters.length, off);
    for (const id of md.confState.voters) off = buf.writeBigUInt64LE(id, off);
    off = buf.writeUInt32LE(md.confState.learners.length, off);
    for (const id of md.confState.learners) off = buf.writeBigUInt64LE(id, off);
    off = writeBytes(buf, m.snapshot.data, off);
  }
  return off;
}

/** Encodes one Message into a fresh buffer. */
export function encodeMessage(m: Message): Buffer {
  const buf = Buffer.allocUnsafe(encodedSize(m));
  encodeMessageInto(m, buf, 0);
  return buf;
}

/** Encodes messages as consecutive stream frames in one buffer (one socket write for a whole batch). */
export function encodeFrames(msgs: readonly Message[]): Buffer {
  let total = 0;
  const sizes = new Array<number>(msgs.length);
  for (let i = 0; i < msgs.length; i++) {
    sizes[i] = encodedSize(msgs[i]);
    total += 4 + sizes[i];
  }
  const buf = Buffer.allocUnsafe(total);
  let off = 0;
  for (let i = 0; i < msgs.length; i++) {
    off = buf.writeUInt32LE(sizes[i], off);
    off = encodeMessageInto(msgs[i], buf, off);
  }
  return buf;
}

/** A zero-length frame: keeps an idle stream alive, carries no message. */
export const KEEPALIVE_FRAME: Buffer = Buffer.alloc(4);

/** Reads the fields of one encoded Message; byte fields are views into `buf`. */
class Reader {
  off: number;
  constructor(
    private readonly buf: Buffer,
    start: number,
    private readonly end: number,
  ) {
    this.off = start;
  }
  need(n: number): void {
    if (this.off + n > this.end) throw new CodecError('truncated message');
  }
  /** Claims the next n bytes and returns where they start. */
  private take(n: number): number {
    this.need(n);
    const at = this.off;
    this.off += n;
    return at;
  }
  u8(): number {
    return this.buf[this.take(1)];
  }
  u32(): number {
    return this.buf.readUInt32LE(this.take(4));
  }
  num(): number {
    const at = this.take(8);
    return this.buf.readUInt32LE(at + 4) * TWO_32 + this.buf.readUInt32LE(at);
  }
  id(): NodeId {
    return this.buf.readBigUInt64LE(this.take(8));
  }
  bytes(): Uint8Array {
    const n = this.u32();
    if (n === 0) return new Uint8Array(0); // not a view: an empty view would still pin the whole input
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset + this.take(n), n);
  }
  ids(): NodeId[] {
    const n = this.u32();
    this.need(n * 8);
    const out = new Array<NodeId>(n);
    for (let i = 0; i < n; i++) out[i] = this.id();
    return out;
  }
}

/**
 * Decodes one Message from buf[start, end). By default the message's bytes are first copied once into
 * a buffer of their own and every byte field (context, entry data, snapshot data) is a view into it:
 * one allocation per message instead of one per entry, and the raft log, which may keep entries long,
 * never pins a 64 KiB network chunk. `copy: false` makes the fields views into `buf` itself, for a
 * caller whose buffer holds just this message (the snapshot request body).
 */
export function decodeMessage(buf: Buffer, start = 0, end = buf.length, copy = true): Message {
  // A message of only fixed fields (heartbeats, votes, most responses) has no bytes to protect.
  if (copy && end - start > HEADER_BYTES) {
    const own = Buffer.from(new Uint8Array(buf.buffer, buf.byteOffset + start, end - start).slice().buffer);
    return decodeMessage(own, 0, own.length, false);
  }
  const r = new Reader(buf, start, end);
  const version = r.u8();
  if (version !== FORMAT_VERSION) throw new CodecError(`unsupported message format version ${version}`);
  const code = r.u8();
  const type = TYPE_CODES[code];
  if (type === undefined) throw new CodecError(`unknown message type code ${code}`);
  const flags = r.u8();
  const to = r.id();
  const from = r.id();
  const term = r.num();
  const logTerm = r.num();
  const index = r.num();
  const commit = r.num();
  const rejectHint = r.num();
  const context = r.bytes();
  const count = r.u32();
  r.need(count * ENTRY_HEADER_BYTES);
  const entries = new Array<Entry>(count);
  for (let i = 0; i < count; i++) {
    const eTerm = r.num();
    const eIndex = r.num();
    const eType = r.u8() as EntryType;
    if (eType !== EntryType.Normal && eType !== EntryType.ConfChange) throw new CodecError(`unknown entry type ${eType}`);
    entries[i] = { term: eTerm, index: eIndex, type: eType, data: r.bytes() };
  }
  let snapshot: Snapshot | undefined;
  if (flags & FLAG_SNAPSHOT) {
    const sIndex = r.num();
    const sTerm = r.num();
    const voters = r.ids();
    const learners = r.ids();
    snapshot = { metadata: { index: sIndex, term: sTerm, confState: { voters, learners } }, data: r.bytes() };
  }
  if (r.off !== end) throw new CodecError(`trailing ${end - r.off} bytes after message`);
  const m: Message = {
    type,
    to,
    from,
    term,
    logTerm,
    index,
    entries,
    commit,
    reject: (flags & FLAG_REJECT) !== 0,
    rejectHint,
    context,
  };
  if (snapshot) m.snapshot = snapshot;
  return m;
}

/**
 * Splits a byte stream into frames. Chunks are kept in a list until a whole frame is present, then joined
 * once, so a multi-megabyte frame arriving in 64 KiB chunks costs one copy, not one per chunk.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  /** Feeds a chunk; calls `onFrame` for every complete non-empty frame (payload only). */
  push(chunk: Buffer, onFrame: (payload: Buffer) => void): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.buffered < 4) return;
      let head = this.chunks[0];
      if (head.length < 4) {
        head = this.join();
      }
      const len = head.readUInt32LE(0);
      if (len > MAX_FRAME_BYTES) throw new CodecError(`frame of ${len} bytes exceeds the limit of ${MAX_FRAME_BYTES}`);
      if (this.buffered < 4 + len) return;
      if (head.length < 4 + len) head = this.join();
      const payload = head.subarray(4, 4 + len);
      const rest = head.subarray(4 + len);
      this.chunks[0] = rest;
      if (rest.length === 0) this.chunks.shift();
      this.buffered -= 4 + len;
      if (len > 0) onFrame(payload);
    }
  }

  /** Bytes held waiting for the rest of a frame. */
  get pending(): number {
    return this.buffered;
  }

  private join(): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
    this.chunks = [all];
    return all;
  }
}

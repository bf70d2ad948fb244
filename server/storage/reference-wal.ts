// Reads the reference's (etcd 3.4/3.5) write-ahead log, to convert a reference data dir into svc's own once.
// svc's WAL uses the same segment names but its own framing (wal-record.ts), so the two are told apart by the
// first record of the first segment.
//
// The reference's format (facts from its sources):
//   frame    int64 little-endian: low 56 bits the record's length; when the top bit is set, the low 3 bits of the
//            top byte are the padding that follows it (records are 8-byte aligned); 0 marks the unwritten end
//   record   walpb.Record { 1 type int64, 2 crc uint32, 3 data bytes }
//   types    1 metadata (etcdserverpb.Metadata {1 NodeID, 2 ClusterID}), 2 entry (raftpb.Entry {1 Type, 2 Term,
//            3 Index, 4 Data}), 3 state (raftpb.HardState {1 term, 2 vote, 3 commit}), 4 crc (the running checksum
//            so far, first in every segment), 5 snapshot (walpb.Snapshot {1 index, 2 term, 3 conf_state})
//   crc      CRC-32C chained over the data of every record but crc records; a crc record restarts the chain
//            from its value (which must equal the running checksum unless that is 0: a reader starting mid-log)
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Entry, HardState } from '../raft/types.js';
import { crc32c } from './crc.js';
import { pbBytes, pbNum, pbRead } from './protobuf.js';
import { parseWalName } from './wal.js';
import { CodedError } from '../coded-error.js';

export const REF_METADATA = 1;
export const REF_ENTRY = 2;
export const REF_STATE = 3;
export const REF_CRC = 4;
export const REF_SNAPSHOT = 5;

/** The reader's bytes are checked in sectors of this size to tell a torn write from damage (as the reference). */
const SECTOR = 512;

/** The reference's WAL is damaged, or is not one. */
export class ReferenceWalError extends CodedError<'REFERENCE_WAL_CORRUPT'> {
  constructor(message: string) {
    super('REFERENCE_WAL_CORRUPT', message);
  }
}

export interface ReferenceSnapshotMark {
  index: number;
  term: number;
  voters: bigint[];
  learners: bigint[];
}

export interface ReferenceWal {
  memberId: bigint;
  clusterId: bigint;
  hardState: HardState;
  /** The surviving log (later entries replace an overwritten suffix), in index order, contiguous. */
  entries: Entry[];
  snapshots: ReferenceSnapshotMark[];
  /** Set when the last segment ends in a torn (never completed) record, which is dropped as the reference does. */
  tornTail?: string;
}

interface RawRecord {
  type: number;
  crc: number;
  data: Buffer;
}

type Frame = { rec: RawRecord; next: number } | { end: true } | { torn: string } | { bad: string };

/** The record at `pos`: its frame, the end of data, a torn last write, or damage. */
function frameAt(buf: Buffer, pos: number): Frame {
  if (pos + 8 > buf.length) return pos >= buf.length ? { end: true } : { torn: 'incomplete frame header' };
  const raw = buf.readBigUInt64LE(pos);
  if (raw === 0n) return { end: true };
  const len = Number(raw & 0x00ffffffffffffffn);
  const top = Number(raw >> 56n);
  const pad = top & 0x80 ? top & 0x7 : 0;
  const start = pos + 8;
  if (len > buf.length || start + len + pad > buf.length) return { torn: `record of ${len} bytes runs past the end of the segment` };
  const body = buf.subarray(start, start + len);
  let m: Map<number, (bigint | Buffer)[]>;
  try {
    m = pbRead(body);
  } catch (e) {
    return isTorn(buf, start, len + pad) ? { torn: 'zeroed sector inside a record' } : { bad: `undecodable record (${(e as Error).message})` };
  }
  const rec = { type: Number(pbNum(m, 1)), crc: Number(pbNum(m, 2) & 0xffffffffn), data: pbBytes(m, 3) };
  return { rec, next: start + len + pad };
}

/** A record some of whose sectors are all zeros was being written when the process stopped. */
function isTorn(buf: Buffer, start: number, n: number): boolean {
  for (let s = start - (start % SECTOR); s < start + n; s += SECTOR) {
    const a = Math.max(s, start);
    const b = Math.min(s + SECTOR, start + n, buf.length);
    if (b > a && buf.subarray(a, b).every((x) => x === 0)) return true;
  }
  return false;
}

/** Whether `file` starts with the reference's first record (a crc record), not svc's framing. */
export function isReferenceWalSegment(file: string): boolean {
  // only the head: this runs at every start, on segments of 64 MB
  const buf = Buffer.alloc(64);
  try {
    const fd = openSync(file, 'r');
    try {
      buf.fill(0, readSync(fd, buf, 0, 64, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
  // svc's frame: u32 length | u32 crc | type byte 1..5; the reference's record starts with protobuf tag 0x08
  if (buf.length < 10 || buf[8] !== 0x08) return false;
  const f = frameAt(buf, 0);
  return 'rec' in f && f.rec.type === REF_CRC;
}

/** The reference's segment files in `dir`, in sequence order (empty when none). */
export function referenceSegments(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map(parseWalName)
    .filter((n) => n !== undefined)
    .sort((a, b) => a.seq - b.seq)
    .map((n) => join(dir, n.name));
}

const u = (v: bigint) => Number(BigInt.asUintN(64, v));

/** Reads and checks every segment of the reference's WAL in `dir`. */
export function readReferenceWal(dir: string): ReferenceWal {
  const files = referenceSegments(dir);
  if (files.length === 0) throw new ReferenceWalError(`no WAL segment (*.wal) in ${dir}`);
  let seq = -1;
  let crc = 0;
  let meta: Buffer | undefined;
  let hardState: HardState = { term: 0, vote: 0n, commit: 0 };
  let entries: Entry[] = [];
  const snapshots: ReferenceSnapshotMark[] = [];
  let tornTail: string | undefined;
  for (let fi = 0; fi < files.length; fi++) {
    const file = files[fi];
    const name = parseWalName(file.slice(dir.length + 1))!;
    if (seq >= 0 && name.seq !== seq + 1) throw new ReferenceWalError(`WAL segment sequence broken at ${file} (after sequence ${seq})`);
    seq = name.seq;
    const buf = readFileSync(file);
    const last = fi === files.length - 1;
    let pos = 0;
    let first = true;
    for (;;) {
      const f = frameAt(buf, pos);
      if ('end' in f) break;
      if ('torn' in f || 'bad' in f) {
        const why = 'torn' in f ? f.torn : f.bad;
        if ('torn' in f && last) {
          tornTail = `${file} at offset ${pos}: ${why}`;
          break;
        }
        throw new ReferenceWalError(`corrupt record in ${file} at offset ${pos}: ${why}`);
      }
      const { rec } = f;
      if (first && rec.type !== REF_CRC) throw new ReferenceWalError(`${file} does not start with a crc record`);
      first = false;
      if (rec.type === REF_CRC) {
        if (crc !== 0 && rec.crc !== crc) throw new ReferenceWalError(`crc chain broken in ${file} at offset ${pos} (record says ${rec.crc.toString(16)}, the records before give ${crc.toString(16)})`);
        crc = rec.crc;
      } else {
        const want = crc32c(rec.data, crc);
        if (want !== rec.crc) {
          if (last && isTorn(buf, pos + 8, f.next - pos - 8)) {
            tornTail = `${file} at offset ${pos}: torn record`;
            break;
          }
          throw new ReferenceWalError(`crc mismatch in ${file} at offset ${pos} (record type ${rec.type}: stored ${rec.crc.toString(16)}, computed ${want.toString(16)})`);
        }
        crc = want;
      }
      const m = rec.type === REF_CRC ? undefined : pbRead(rec.data);
      switch (rec.type) {
        case REF_METADATA:
          if (meta && !meta.equals(rec.data)) throw new ReferenceWalError(`conflicting metadata records in ${file}`);
          meta = Buffer.from(rec.data);
          break;
        case REF_ENTRY: {
          const e: Entry = { type: Number(pbNum(m!, 1)), term: u(pbNum(m!, 2)), index: u(pbNum(m!, 3)), data: Buffer.from(pbBytes(m!, 4)) };
          // a later entry at index i replaces the entries from i on (the leader overwrote an uncommitted suffix)
          if (entries.length > 0) {
            const firstIndex = entries[0].index;
            if (e.index < firstIndex) entries = [];
            else if (e.index > entries[entries.length - 1].index + 1) throw new ReferenceWalError(`entry ${e.index} does not follow entry ${entries[entries.length - 1].index} in ${file}`);
            else entries.length = e.index - firstIndex;
          }
          entries.push(e);
          break;
        }
        case REF_STATE:
          hardState = { term: u(pbNum(m!, 1)), vote: BigInt.asUintN(64, pbNum(m!, 2)), commit: u(pbNum(m!, 3)) };
          break;
        case REF_SNAPSHOT: {
          const cs = pbRead(pbBytes(m!, 3));
          const ids = (f: number) => (cs.get(f) ?? []).flatMap((v) => (typeof v === 'bigint' ? [BigInt.asUintN(64, v)] : packed(v)));
          snapshots.push({ index: u(pbNum(m!, 1)), term: u(pbNum(m!, 2)), voters: ids(1), learners: ids(2) });
          break;
        }
        case REF_CRC:
          break;
        default:
          throw new ReferenceWalError(`unknown record type ${rec.type} in ${file} at offset ${pos}`);
      }
      pos = f.next;
    }
  }
  if (!meta) throw new ReferenceWalError(`the WAL in ${dir} has no metadata record`);
  const md = pbRead(meta);
  return { memberId: BigInt.asUintN(64, pbNum(md, 1)), clusterId: BigInt.asUintN(64, pbNum(md, 2)), hardState, entries, snapshots, tornTail };
}

/** Packed repeated uint64 (a proto3 writer's form of a repeated field). */
function packed(b: Buffer): bigint[] {
  const out: bigint[] = [];
  let i = 0;
  while (i < b.length) {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const c = b[i++];
      v |= BigInt(c & 0x7f) << shift;
      if (!(c & 0x80)) break;
      shift += 7n;
    }
    out.push(v);
  }
  return out;
}

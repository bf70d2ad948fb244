// Delta segments of continuous backup (groundwork, issue 27 item 2): the changes after a full snapshot, as a watch of
// the whole keyspace delivers them, grouped by revision and written as small files. A segment is JSON lines: a header
// {format, version, fromRevision, toRevision, firstTime, lastTime, revisions, sha256 of the lines after it}, then one
// line per revision {"r": revision, "s": when the writer saw it committed (ISO), "ops": [{"t": "put", "k": b64, "v":
// b64} | {"t": "del", "k": b64}]} ("s" came in later within version 1: a segment without it is read, its revisions
// timed only by the header's lastTime; an older reader skips it). Every
// revision from fromRevision to toRevision has its line: a revision exists only because something was written in
// it, so a missing one is a hole the reader refuses. Replaying a revision as one transaction gives it back its
// number (runtime/delta-replay.ts). Pure: no clock, no files.
import { createHash } from 'node:crypto';

export const DELTA_FORMAT = 'svc-delta';
export const DELTA_VERSION = 1;

/** One write of a revision. Leases are not carried (a replayed key has none). */
export type DeltaOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'delete'; key: Buffer };

/** Everything one revision changed. */
export interface RevisionChange {
  revision: number;
  ops: DeltaOp[];
  /** When the writer saw it committed (ISO; the watch response that delivered it): what a time restore goes by. */
  seen?: string;
}

/** A run of consecutive revisions. */
export interface DeltaSegment {
  fromRevision: number;
  toRevision: number;
  /** When the writer saw the first and the last of them (ISO). */
  firstTime: string;
  lastTime: string;
  changes: RevisionChange[];
}

/** A watch event as the client library delivers it (mvccpb.Event: its type, the key-value with its mod revision). */
export interface WatchedEvent {
  type: 'PUT' | 'DELETE';
  kv: { key: Uint8Array | string; value?: Uint8Array | string | null; mod_revision: string | number };
}

/** Raised by a segment that cannot be read: the cause and the segment's name when known. */
export class DeltaFormatError extends Error {
  /** `problem`: the cause alone, without the segment's name. */
  constructor(message: string, readonly problem = message) {
    super(message);
    this.name = 'DeltaFormatError';
  }
}

const bytes = (b: Uint8Array | string | null | undefined): Buffer => (b === null || b === undefined ? Buffer.alloc(0) : Buffer.from(b as Uint8Array));

/**
 * Watch events (in the order delivered: by revision) as one change per revision. A revision split over two watch
 * responses joins its earlier part; events out of order are refused (a watch never delivers them so).
 */
export function groupByRevision(events: readonly WatchedEvent[], into: RevisionChange[] = [], seen?: Date): RevisionChange[] {
  const out = into;
  for (const e of events) {
    const revision = Number(e.kv.mod_revision);
    if (!Number.isSafeInteger(revision) || revision < 1) throw new DeltaFormatError(`watch event with revision ${String(e.kv.mod_revision)}`);
    const last = out.at(-1);
    if (last && revision < last.revision) throw new DeltaFormatError(`watch event of revision ${revision} after revision ${last.revision}`);
    const op: DeltaOp = e.type === 'PUT' ? { type: 'put', key: bytes(e.kv.key), value: bytes(e.kv.value) } : { type: 'delete', key: bytes(e.kv.key) };
    if (last && last.revision === revision) last.ops.push(op);
    else out.push({ revision, ops: [op], ...(seen ? { seen: seen.toISOString() } : {}) });
  }
  return out;
}

/** Why `changes` cannot be one segment (empty, or a revision missing or repeated), or undefined. */
export function contiguityProblem(changes: readonly RevisionChange[], after?: number): string | undefined {
  if (changes.length === 0) return 'no revisions';
  let expect = after === undefined ? changes[0].revision : after + 1;
  for (const c of changes) {
    if (c.revision !== expect) return `revision ${c.revision} where ${expect} was expected${c.revision > expect ? ` (revisions ${expect}..${c.revision - 1} are missing)` : ''}`;
    if (c.ops.length === 0) return `revision ${c.revision} has no writes`;
    expect++;
  }
  return undefined;
}

/** A segment of `changes` (consecutive revisions) seen between firstTime and lastTime. */
export function makeSegment(changes: RevisionChange[], firstTime: Date, lastTime: Date): DeltaSegment {
  const problem = contiguityProblem(changes);
  if (problem) throw new DeltaFormatError(`cannot make a delta segment: ${problem}`);
  return { fromRevision: changes[0].revision, toRevision: changes.at(-1)!.revision, firstTime: firstTime.toISOString(), lastTime: lastTime.toISOString(), changes };
}

/** The segment's file name: its revisions, zero-padded so names sort as revisions do. */
export function segmentFileName(s: Pick<DeltaSegment, 'fromRevision' | 'toRevision'>): string {
  return `delta-${String(s.fromRevision).padStart(16, '0')}-${String(s.toRevision).padStart(16, '0')}.jsonl`;
}

export function encodeSegment(s: DeltaSegment): Buffer {
  const body = s.changes.map((c) => `${JSON.stringify({ r: c.revision, ...(c.seen ? { s: c.seen } : {}), ops: c.ops.map((o) => (o.type === 'put' ? { t: 'put', k: o.key.toString('base64'), v: o.value.toString('base64') } : { t: 'del', k: o.key.toString('base64') })) })}\n`).join('');
  const header = { format: DELTA_FORMAT, version: DELTA_VERSION, fromRevision: s.fromRevision, toRevision: s.toRevision, firstTime: s.firstTime, lastTime: s.lastTime, revisions: s.changes.length, sha256: createHash('sha256').update(body).digest('hex') };
  return Buffer.from(`${JSON.stringify(header)}\n${body}`);
}

/** Reads a segment; a wrong format or version, a checksum mismatch, a hole or a malformed line is refused, naming `name`. */
export function decodeSegment(data: Buffer, name = 'delta segment'): DeltaSegment {
  const bad = (problem: string) => new DeltaFormatError(`${name}: ${problem}`, problem);
  const text = data.toString('utf8');
  const nl = text.indexOf('\n');
  if (nl < 0) throw bad('no header line');
  let h: Record<string, unknown>;
  try {
    h = JSON.parse(text.slice(0, nl)) as Record<string, unknown>;
  } catch {
    throw bad('the header is not JSON');
  }
  if (h.format !== DELTA_FORMAT) throw bad(`not a delta segment (format ${JSON.stringify(h.format)})`);
  if (h.version !== DELTA_VERSION) throw bad(`format version ${String(h.version)}; this release reads version ${DELTA_VERSION} (a newer release wrote it)`);
  const body = text.slice(nl + 1);
  if (createHash('sha256').update(body).digest('hex') !== h.sha256) throw bad('sha256 mismatch (the file is truncated or altered)');
  const changes: RevisionChange[] = body.split('\n').filter((l) => l !== '').map((line, i) => {
    try {
      const j = JSON.parse(line) as { r: number; s?: string; ops: Array<{ t: string; k: string; v?: string }> };
      if (j.s !== undefined && (typeof j.s !== 'string' || Number.isNaN(Date.parse(j.s)))) throw new Error(`seen time ${JSON.stringify(j.s)} is not a time`);
      return {
        revision: j.r,
        ...(j.s !== undefined ? { seen: j.s } : {}),
        ops: j.ops.map((o): DeltaOp => {
          if (o.t === 'put' && typeof o.v === 'string') return { type: 'put', key: Buffer.from(o.k, 'base64'), value: Buffer.from(o.v, 'base64') };
          if (o.t === 'del') return { type: 'delete', key: Buffer.from(o.k, 'base64') };
          throw new Error(`unknown op ${JSON.stringify(o.t)}`);
        }),
      };
    } catch (e) {
      throw bad(`line ${i + 2}: ${(e as Error).message}`);
    }
  });
  const problem = contiguityProblem(changes);
  if (problem) throw bad(problem);
  if (changes[0].revision !== h.fromRevision || changes.at(-1)!.revision !== h.toRevision || changes.length !== h.revisions) {
    throw bad(`the header says revisions ${String(h.fromRevision)}..${String(h.toRevision)} (${String(h.revisions)}), the lines hold ${changes[0].revision}..${changes.at(-1)!.revision} (${changes.length})`);
  }
  return { fromRevision: changes[0].revision, toRevision: changes.at(-1)!.revision, firstTime: String(h.firstTime), lastTime: String(h.lastTime), changes };
}

/**
 * The changes that take a snapshot at `base` to `target`, from segments in any order: they must cover base+1..target
 * without a hole (overlaps are fine: a writer restarted from its last revision). Refused with the covered range.
 */
export function changesBetween(segments: readonly DeltaSegment[], base: number, target: number): RevisionChange[] {
  const byRev = new Map<number, RevisionChange>();
  for (const s of segments) for (const c of s.changes) if (c.revision > base && c.revision <= target) byRev.set(c.revision, c);
  const out: RevisionChange[] = [];
  for (let r = base + 1; r <= target; r++) {
    const c = byRev.get(r);
    if (!c) {
      const covered = out.length > 0 ? `${base + 1}..${out.at(-1)!.revision}` : 'none';
      throw new DeltaFormatError(`revision ${r} is in no delta segment: from the snapshot at ${base} the segments cover revisions ${covered}, not up to ${target}`);
    }
    out.push(c);
  }
  return out;
}

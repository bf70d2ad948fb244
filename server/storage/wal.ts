// The write-ahead log of a member: raft entries, hard states and snapshot markers, appended to
// numbered segment files in <data-dir>/member/wal and fsynced before a save resolves.
//
// Layout: segments named %016x-%016x.wal (sequence, index of the first entry the segment may hold),
// preallocated to the segment size (zeros mark the unwritten end) and cut once they pass it. Every
// segment begins with a CRC record (linking it to the previous segment), the metadata and the last
// hard state, so each one can be read on its own once older ones are purged.
// Group commit: saves are encoded synchronously (call order is log order) into a queue; one writer
// drains the queue, so all saves that arrived while an fsync was in flight share the next write+fsync.
import { fdatasyncSync, readdirSync, writeSync, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../log/logger.js';
import type { ConfState, Entry, HardState } from '../raft/types.js';
import { decodeEntry, decodeHardState, decodeMarker, encodeHardState, encodeMarker, writeEntry, writeHardState, writeMarker } from './codec.js';
import { DirLock } from './wal-lock.js';
import { WalCorruptError, WalError } from './wal-errors.js';
import { encodeFrame, FrameBuffer, RecordType, scanSegment, type DecodedRecord } from './wal-record.js';

export { WalCorruptError, WalError } from './wal-errors.js';

/** Where the log starts: the index/term of the consensus snapshot the caller restored. */
export interface WalSnapshotMarker {
  index: number;
  term: number;
  confState?: ConfState;
}

export interface WalOptions {
  /** Preallocated size of each segment; a segment is cut once it passes this. Default 64 MiB. */
  segmentSizeBytes?: number;
  /** Skip fsync (tests and benchmarks only: a crash loses acknowledged writes). */
  unsafeNoFsync?: boolean;
}

export interface WalReadResult {
  metadata: Uint8Array;
  hardState: HardState;
  entries: Entry[];
}

export const DEFAULT_SEGMENT_SIZE_BYTES = 64 * 1024 * 1024;
/** The frame buffer is reused after each write up to this size; a larger one is dropped. */
const MAX_KEPT_FRAME_BUFFER = 4 * 1024 * 1024;
export const WAL_SUFFIX = '.wal';
const EMPTY_HARD_STATE: HardState = { term: 0, vote: 0n, commit: 0 };

interface SegmentName {
  seq: number;
  index: number;
  name: string;
}

/** The file name of segment `seq` whose first entry index is `index`. */
export function walName(seq: number, index: number): string {
  return `${seq.toString(16).padStart(16, '0')}-${index.toString(16).padStart(16, '0')}${WAL_SUFFIX}`;
}

/** Parses a segment file name; undefined when it is not one. */
export function parseWalName(name: string): SegmentName | undefined {
  const m = /^([0-9a-f]{16})-([0-9a-f]{16})\.wal$/.exec(name);
  if (!m) return undefined;
  return { seq: parseInt(m[1]!, 16), index: parseInt(m[2]!, 16), name };
}

function readWalNames(dir: string): SegmentName[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .map(parseWalName)
    .filter((n): n is SegmentName => n !== undefined)
    .sort((a, b) => a.seq - b.seq);
}

/** Whether `dir` holds a WAL (at least one segment file). */
export function walExists(dir: string): boolean {
  return readWalNames(dir).length > 0;
}

function isEmptyHardState(h: HardState): boolean {
  return h.term === 0 && h.vote === 0n && h.commit === 0;
}

/** raft's rule: entries, a new term or a new vote must be durable before messages go out; commit need not. */
function mustSyncFor(h: HardState | undefined, prev: HardState, entryCount: number): boolean {
  return entryCount > 0 || (h !== undefined && (h.term !== prev.term || h.vote !== prev.vote));
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

// In-process view of which segments each open WAL still needs, for purgeFiles.
const openWals = new Map<string, Wal>();

interface ScannedSegment {
  seg: SegmentName;
  path: string;
  records: DecodedRecord[];
  end: number;
  torn?: { offset: number; reason: string; size: number };
}

/** Reads and checks segments from `names[from]` on; the last one may end in a torn record. */
async function scanSegments(dir: string, names: SegmentName[], from: number): Promise<ScannedSegment[]> {
  const out: ScannedSegment[] = [];
  let prevCrc: number | undefined;
  for (let i = from; i < names.length; i++) {
    const seg = names[i]!;
    const path = join(dir, seg.name);
    const buf = await fsp.readFile(path);
    const scan = scanSegment(buf);
    const isLast = i === names.length - 1;
    if (scan.failure && (scan.failure.followedByValidData || !isLast)) {
      throw new WalCorruptError(path, scan.failure.offset, scan.failure.reason);
    }
    const first = scan.records[0];
    if (!first || first.type !== RecordType.Crc || first.data.length !== 4) {
      // A segment only gets its final name after its header is synced, so a missing header is damage.
      throw new WalCorruptError(path, 0, 'segment does not start with a crc record');
    }
    if (prevCrc !== undefined && first.data.readUInt32LE(0) !== prevCrc) {
      throw new WalCorruptError(path, 0, 'segment does not continue the previous segment (crc chain broken)');
    }
    const last = scan.records[scan.records.length - 1]!;
    prevCrc = last.crc;
    // Copy record bodies out so a (64 MiB) segment buffer is freed as soon as it has been scanned.
    const records = scan.records.map((r) => ({ ...r, data: Buffer.from(r.data) }));
    const s: ScannedSegment = { seg, path, records, end: scan.end };
    if (scan.failure) s.torn = { offset: scan.failure.offset, reason: scan.failure.reason, size: buf.length };
    out.push(s);
  }
  return out;
}

/** Index in `names` of the last segment that can hold the entry after `index`. */
function searchIndex(names: SegmentName[], index: number): number {
  for (let i = names.length - 1; i >= 0; i--) if (names[i]!.index <= index) return i;
  return -1;
}

function selectSegments(dir: string, snap: WalSnapshotMarker): { names: SegmentName[]; from: number } {
  const names = readWalNames(dir);
  const from = searchIndex(names, snap.index);
  if (from < 0) throw new WalError('WAL_FILE_NOT_FOUND', `wal: no segment in ${dir} covers index ${snap.index}`);
  for (let i = from + 1; i < names.length; i++) {
    if (names[i]!.seq !== names[i - 1]!.seq + 1) {
      throw new WalError('WAL_FILE_NOT_FOUND', `wal: segment sequence broken at ${names[i]!.name} in ${dir}`);
    }
  }
  return { names, from };
}

interface Pending {
  /** The CRC of its last frame (its frames wait in the WAL's frame buffer). */
  crc: number;
  sync: boolean;
  lastEntryIndex?: number;
  snapIndex?: number;
  hardState?: HardState;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** A write-ahead log, opened either for appending (after readAll) or for reading only. */
export class Wal {
  private metadata: Uint8Array = new Uint8Array();
  private start: WalSnapshotMarker;
  private scanned: ScannedSegment[] | undefined;
  private readDone = false;

  // Appending state: what has been written (not merely queued) to the tail.
  private segments: SegmentName[] = [];
  private tail: FileHandle | undefined;
  private tailOffset = 0;
  private writtenCrc = 0;
  private writtenEntryIndex = 0;
  private writtenState: HardState = EMPTY_HARD_STATE;
  // What has been queued: raft's view, used to decide whether a save must sync.
  private queuedState: HardState = EMPTY_HARD_STATE;

  private queue: Pending[] = [];
  /** The frames of the queued saves, in queue order; emptied once written. */
  private frames = new FrameBuffer();
  private flushing: Promise<void> | undefined;
  private failure: Error | undefined;
  private closed = false;
  private syncs = 0;

  private constructor(
    private readonly logger: Logger,
    readonly dir: string,
    private readonly readOnly: boolean,
    private readonly segmentSize: number,
    private readonly noSync: boolean,
    private lock: DirLock | undefined,
    start: WalSnapshotMarker,
  ) {
    this.start = start;
  }

  /** fsync/fdatasync calls made on segment files so far (group commit makes this far below the save count). */
  get fsyncCount(): number {
    return this.syncs;
  }

  /** @internal */
  static async create(logger: Logger, dir: string, metadata: Uint8Array, opts: WalOptions): Promise<Wal> {
    if (walExists(dir)) throw new WalError('WAL_EXISTS', `wal: ${dir} already holds a WAL`);
    // Build in a temp dir and rename it into place so a crash never leaves a half-made WAL.
    const tmp = resolve(dir) + '.tmp';
    await fsp.rm(tmp, { recursive: true, force: true });
    await fsp.mkdir(tmp, { recursive: true });
    const lock = await DirLock.acquire(tmp);
    const w = new Wal(logger, dir, false, opts.segmentSizeBytes ?? DEFAULT_SEGMENT_SIZE_BYTES, !!opts.unsafeNoFsync, lock, {
      index: 0,
      term: 0,
    });
    w.metadata = metadata;
    const name = walName(0, 0);
    const fh = await fsp.open(join(tmp, name), 'wx+', 0o600);
    await fh.truncate(w.segmentSize);
    const frames = [
      encodeFrame(RecordType.Crc, u32(0)),
      encodeFrame(RecordType.Metadata, metadata),
      encodeFrame(RecordType.Snapshot, encodeMarker({ index: 0, term: 0 })),
    ];
    const buf = Buffer.concat(frames.map((f) => f.buf));
    await fh.write(buf, 0, buf.length, 0);
    await fh.sync();
    await fsyncDir(tmp); // the segment's name inside the temp dir must be durable before the rename
    await fsp.rm(dir, { recursive: true, force: true });
    await fsp.rename(tmp, dir);
    lock.moved(dir);
    await fsyncDir(dirname(resolve(dir)));
    w.tail = fh;
    w.tailOffset = buf.length;
    w.writtenCrc = frames[frames.length - 1]!.crc;
    w.segments = [{ seq: 0, index: 0, name }];
    w.readDone = true;
    openWals.set(resolve(dir), w);
    return w;
  }

  /** @internal */
  static async open(logger: Logger, dir: string, snap: WalSnapshotMarker, write: boolean, opts: WalOptions): Promise<Wal> {
    const { names, from } = selectSegments(dir, snap);
    const lock = write ? await DirLock.acquire(dir) : undefined;
    const w = new Wal(logger, dir, !write, opts.segmentSizeBytes ?? DEFAULT_SEGMENT_SIZE_BYTES, !!opts.unsafeNoFsync, lock, snap);
    try {
      w.scanned = await scanSegments(dir, names, from);
      const last = w.scanned[w.scanned.length - 1]!;
      if (last.torn && !write) {
        logger.warn('WAL ends in a torn record; reading up to it', { path: last.path, offset: last.torn.offset, reason: last.torn.reason });
      }
      if (write) {
        await Promise.all(
          readdirSync(dir)
            .filter((n) => n.endsWith('.wal.tmp'))
            .map((n) => fsp.rm(join(dir, n), { force: true })),
        );
        w.tail = await fsp.open(last.path, 'r+');
        if (last.torn) {
          // The last write never completed (crash mid-append): it was never acknowledged, drop it.
          logger.warn('repairing torn WAL tail: truncating to the last whole record', {
            path: last.path,
            offset: last.torn.offset,
            'dropped-bytes': last.torn.size - last.torn.offset,
            reason: last.torn.reason,
          });
          await w.tail.truncate(last.torn.offset);
          await w.tail.sync();
        }
        // Re-extend with zeros so the unwritten end reads as "no record" again.
        if ((await w.tail.stat()).size < w.segmentSize) await w.tail.truncate(w.segmentSize);
        w.tailOffset = last.end;
        w.writtenCrc = last.records[last.records.length - 1]!.crc;
        w.segments = names.slice(from);
        openWals.set(resolve(dir), w);
      }
      return w;
    } catch (err) {
      await w.tail?.close();
      await lock?.release();
      throw err;
    }
  }

  /** Reads the records after the start snapshot: metadata, the last hard state, and the surviving entries. */
  async readAll(): Promise<WalReadResult> {
    if (this.readDone || !this.scanned) throw new WalError('WAL_FAILED', 'wal: readAll may be called once, right after open');
    let metadata: Uint8Array | undefined;
    let hardState: HardState = EMPTY_HARD_STATE;
    const entries: Entry[] = [];
    let lastEntryIndex = 0;
    let match = false;
    const start = this.start;
    for (const seg of this.scanned) {
      for (const rec of seg.records) {
        switch (rec.type) {
          case RecordType.Entry: {
            const e = decodeEntry(rec.data);
            if (e.index > start.index) {
              const up = e.index - start.index - 1;
              if (up > entries.length) {
                throw new WalError('WAL_GAP', `wal: entry ${e.index} follows ${start.index + entries.length} (${seg.path} offset ${rec.offset})`);
              }
              // A later entry at index i replaces the old entries >= i (raft overwrote an uncommitted suffix).
              entries.length = up;
              entries.push(e);
            }
            lastEntryIndex = e.index;
            break;
          }
          case RecordType.HardState:
            hardState = decodeHardState(rec.data);
            break;
          case RecordType.Metadata:
            if (metadata !== undefined && !Buffer.from(metadata).equals(rec.data)) {
              throw new WalError('WAL_METADATA_CONFLICT', `wal: conflicting metadata in ${seg.path}`);
            }
            metadata = new Uint8Array(rec.data);
            break;
          case RecordType.Snapshot: {
            const m = decodeMarker(rec.data);
            if (m.index === start.index) {
              if (m.term !== start.term) {
                throw new WalError('WAL_SNAPSHOT_MISMATCH', `wal: snapshot at index ${m.index} has term ${m.term}, expected ${start.term}`);
              }
              match = true;
            }
            if (m.index > lastEntryIndex) lastEntryIndex = m.index;
            break;
          }
          case RecordType.Crc:
            break;
        }
      }
    }
    this.scanned = undefined;
    this.readDone = true;
    if (!match) {
      throw new WalError('WAL_SNAPSHOT_NOT_FOUND', `wal: snapshot marker index ${start.index} term ${start.term} not found in ${this.dir}`);
    }
    this.metadata = metadata ?? new Uint8Array();
    this.writtenState = hardState;
    this.queuedState = hardState;
    this.writtenEntryIndex = lastEntryIndex;
    return { metadata: this.metadata, hardState, entries };
  }

  private checkWritable(): void {
    if (this.readOnly) throw new WalError('WAL_READ_ONLY', 'wal: opened for reading only');
    if (this.closed) throw new WalError('WAL_CLOSED', 'wal: closed');
    if (!this.readDone) throw new WalError('WAL_NOT_READ', 'wal: readAll must run before appending');
    if (this.failure) throw new WalError('WAL_FAILED', `wal: an earlier write failed: ${this.failure.message}`);
  }

  /** Appends entries and the hard state; resolves once durable (fsynced) when a sync is needed. */
  save(hardState: HardState | undefined, entries: Entry[], mustSync?: boolean): Promise<void> {
    try {
      this.checkWritable();
    } catch (err) {
      return Promise.reject(err);
    }
    const hs = hardState && !isEmptyHardState(hardState) ? hardState : undefined;
    if (!hs && entries.length === 0) return Promise.resolve();
    const sync = mustSync ?? mustSyncFor(hs, this.queuedState, entries.length);
    let crc = 0;
    for (const e of entries) {
      writeEntry(this.frames.begin(RecordType.Entry), e);
      crc = this.frames.end();
    }
    if (hs) {
      writeHardState(this.frames.begin(RecordType.HardState), hs);
      crc = this.frames.end();
      this.queuedState = { ...hs };
    }
    const lastEntryIndex = entries.length > 0 ? entries[entries.length - 1]!.index : undefined;
    return this.enqueue(crc, sync, lastEntryIndex, hs ? { ...hs } : undefined);
  }

  /** Records that a consensus snapshot at marker.index exists; resolves once durable. */
  saveSnapshot(marker: WalSnapshotMarker): Promise<void> {
    try {
      this.checkWritable();
    } catch (err) {
      return Promise.reject(err);
    }
    writeMarker(this.frames.begin(RecordType.Snapshot), marker);
    return this.enqueue(this.frames.end(), true, undefined, undefined, marker.index);
  }

  private enqueue(crc: number, sync: boolean, lastEntryIndex?: number, hardState?: HardState, snapIndex?: number): Promise<void> {
    return new Promise<void>((resolvePromise, reject) => {
      const p: Pending = { crc, sync, resolve: resolvePromise, reject };
      if (lastEntryIndex !== undefined) p.lastEntryIndex = lastEntryIndex;
      if (snapIndex !== undefined) p.snapIndex = snapIndex;
      if (hardState) p.hardState = hardState;
      this.queue.push(p);
      if (!this.flushing) this.flushing = this.flushLoop();
    });
  }

  private async flushLoop(): Promise<void> {
    // Let saves issued in the same tick join the first batch.
    await null;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          await this.writeBatch(batch);
        } catch (err) {
          this.failure = err as Error;
          this.logger.error('failed to write WAL; refusing further appends', { path: this.dir, error: String(err) });
          const failed = [...batch, ...this.queue];
          this.queue = [];
          for (const p of failed) p.reject(err as Error);
          return;
        }
        for (const p of batch) p.resolve();
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Writes the batch's frames (all of the frame buffer: the batch is the whole queue) and syncs if one asks. */
  private async writeBatch(batch: Pending[]): Promise<void> {
    let sync = false;
    for (const p of batch) sync ||= p.sync;
    const buf = this.frames.view();
    try {
      // Synchronous: on a busy event loop a thread-pool round trip per write and per fdatasync costs far more
      // than the system calls themselves (measured: ms against ~0.1 ms), and the raft loop waits on them anyway.
      writeFullySync(this.tail!.fd, buf, this.tailOffset);
    } finally {
      // written (or failed: the WAL refuses appends from now on); a buffer grown by a large batch is let go
      if (this.frames.length > MAX_KEPT_FRAME_BUFFER) this.frames = new FrameBuffer();
      else this.frames.reset();
    }
    this.tailOffset += buf.length;
    for (const p of batch) {
      this.writtenCrc = p.crc;
      if (p.lastEntryIndex !== undefined) this.writtenEntryIndex = p.lastEntryIndex;
      // A snapshot marker only moves the index forward (the next segment's name must not go back).
      if (p.snapIndex !== undefined) this.writtenEntryIndex = Math.max(this.writtenEntryIndex, p.snapIndex);
      if (p.hardState) this.writtenState = p.hardState;
    }
    if (this.tailOffset >= this.segmentSize) {
      await this.cut(); // syncs the finished segment
    } else if (sync) {
      await this.datasync(this.tail!);
    }
  }

  private async datasync(fh: FileHandle, full = false): Promise<void> {
    if (this.noSync) return;
    const t0 = Date.now();
    // Segments are preallocated, so appends do not change the size and fdatasync suffices.
    if (full) await fh.sync();
    else fdatasyncSync(fh.fd);
    this.syncs++;
    const took = Date.now() - t0;
    if (took > 1000) this.logger.warn('slow fdatasync', { took: `${took}ms`, 'expected-duration': '1s' });
  }

  /** Closes the full tail segment and starts the next one. */
  private async cut(): Promise<void> {
    const old = this.tail!;
    await old.truncate(this.tailOffset); // give back the unused preallocation
    await this.datasync(old, true);
    const seq = this.segments[this.segments.length - 1]!.seq + 1;
    const name = walName(seq, this.writtenEntryIndex + 1);
    const finalPath = join(this.dir, name);
    const tmpPath = finalPath + '.tmp';
    const fh = await fsp.open(tmpPath, 'w+', 0o600);
    await fh.truncate(this.segmentSize);
    const frames = [encodeFrame(RecordType.Crc, u32(this.writtenCrc)), encodeFrame(RecordType.Metadata, this.metadata)];
    if (!isEmptyHardState(this.writtenState)) frames.push(encodeFrame(RecordType.HardState, encodeHardState(this.writtenState)));
    const buf = Buffer.concat(frames.map((f) => f.buf));
    await writeFully(fh, buf, 0);
    await this.datasync(fh, true);
    // Only a fully written, synced segment gets its final name.
    await fsp.rename(tmpPath, finalPath);
    if (!this.noSync) await fsyncDir(this.dir);
    await old.close();
    this.tail = fh;
    this.tailOffset = buf.length;
    this.writtenCrc = frames[frames.length - 1]!.crc;
    this.segments.push({ seq, index: this.writtenEntryIndex + 1, name });
    this.logger.info('created a new WAL segment', { path: finalPath });
  }

  /** Lets purgeFiles delete segments that hold only entries below `index` (keeps the one containing it). */
  releaseLockTo(index: number): void {
    let smaller = this.segments.length - 1;
    for (let i = 0; i < this.segments.length; i++) {
      if (this.segments[i]!.index >= index) {
        smaller = i - 1;
        break;
      }
    }
    if (smaller <= 0) return;
    this.segments = this.segments.slice(smaller);
  }

  /** @internal Whether purging must keep this segment. */
  holds(name: string): boolean {
    return this.segments.some((s) => s.name === name);
  }

  /** Waits for queued saves, syncs, and releases the files and the lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    try {
      if (this.tail) {
        if (!this.failure) await this.datasync(this.tail);
        await this.tail.close();
        this.tail = undefined;
      }
    } finally {
      if (openWals.get(resolve(this.dir)) === this) openWals.delete(resolve(this.dir));
      await this.lock?.release();
      this.lock = undefined;
    }
  }
}

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0, 0);
  return b;
}

function writeFullySync(fd: number, buf: Buffer, position: number): void {
  let done = 0;
  while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done, position + done);
}

async function writeFully(fh: FileHandle, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesWritten } = await fh.write(buf, done, buf.length - done, position + done);
    done += bytesWritten;
  }
}

/** Creates a new WAL in `dir` (which must not hold one) whose segments all carry `metadata`; ready to append. */
export function createWal(logger: Logger, dir: string, metadata: Uint8Array, opts: WalOptions = {}): Promise<Wal> {
  return Wal.create(logger, dir, metadata, opts);
}

/** Opens the WAL for read-then-append from `snap`; a torn last record is repaired (truncated) with a warning. */
export function openWal(logger: Logger, dir: string, snap: WalSnapshotMarker, opts: WalOptions = {}): Promise<Wal> {
  return Wal.open(logger, dir, snap, true, opts);
}

/** Opens the WAL for reading only: no lock, no repair, a torn tail is read up to. */
export function openWalForRead(logger: Logger, dir: string, snap: WalSnapshotMarker): Promise<Wal> {
  return Wal.open(logger, dir, snap, false, {});
}

/** Truncates a torn last record of the newest segment; false when the damage is not a torn tail (or no WAL). */
export async function repairWal(logger: Logger, dir: string): Promise<boolean> {
  const names = readWalNames(dir);
  if (names.length === 0) return false;
  const last = names[names.length - 1]!;
  const path = join(dir, last.name);
  logger.info('repairing', { path });
  let lock: DirLock;
  try {
    lock = await DirLock.acquire(dir);
  } catch (err) {
    logger.warn('failed to repair', { path, error: String(err) });
    return false;
  }
  try {
    const scan = scanSegment(await fsp.readFile(path));
    if (!scan.failure) {
      logger.info('repaired', { path, note: 'nothing to repair' });
      return true;
    }
    if (scan.failure.followedByValidData) {
      logger.warn('failed to repair', { path, offset: scan.failure.offset, error: `corrupt record followed by valid data: ${scan.failure.reason}` });
      return false;
    }
    const fh = await fsp.open(path, 'r+');
    try {
      await fh.truncate(scan.failure.offset);
      await fh.sync();
    } finally {
      await fh.close();
    }
    logger.warn('repaired torn WAL tail', { path, offset: scan.failure.offset, reason: scan.failure.reason });
    return true;
  } finally {
    await lock.release();
  }
}

/** Default of --max-wals and --max-snapshots. */
export const DEFAULT_MAX_FILES = 5;

/** Deletes the oldest files ending in `suffix` in `dir` beyond the newest `max`; WAL segments an open WAL holds are kept. */
export async function purgeFiles(logger: Logger, dir: string, suffix: string, max = DEFAULT_MAX_FILES): Promise<string[]> {
  let names: string[];
  try {
    names = (await fsp.readdir(dir)).filter((n) => n.endsWith(suffix)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const holder = openWals.get(resolve(dir));
  const removed: string[] = [];
  while (names.length > max) {
    const name = names[0]!;
    // Segments are purged oldest first; stop at the first one still needed so the log stays contiguous.
    if (holder && holder.holds(name)) break;
    const path = join(dir, name);
    await fsp.rm(path, { force: true });
    logger.info('purged file', { path });
    removed.push(name);
    names.shift();
  }
  return removed;
}

/** Snapshot markers recorded in the WAL whose index is committed (so a matching .snap file may be loaded). */
export async function walSnapshots(logger: Logger, walDir: string): Promise<WalSnapshotMarker[]> {
  const names = readWalNames(walDir);
  if (names.length === 0) return [];
  const segs = await scanSegments(walDir, names, 0);
  const last = segs[segs.length - 1]!;
  if (last.torn) logger.warn('WAL ends in a torn record; reading up to it', { path: last.path, offset: last.torn.offset });
  const markers: WalSnapshotMarker[] = [];
  let commit = 0;
  for (const seg of segs) {
    for (const rec of seg.records) {
      if (rec.type === RecordType.Snapshot) markers.push(decodeMarker(rec.data));
      else if (rec.type === RecordType.HardState) commit = decodeHardState(rec.data).commit;
    }
  }
  return markers.filter((m) => m.index <= commit);
}

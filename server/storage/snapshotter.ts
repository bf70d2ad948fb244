// Consensus snapshot files: <data-dir>/member/snap/%016x-%016x.snap (term-index).
// File: 8-byte magic "SVCSNAP1" | u32 LE CRC-32 of the body | body (codec.encodeSnapshot).
// Written to a temp file, fsynced, renamed, and the directory fsynced, so a crash leaves either the
// old set of files or the new complete one. A file that fails to read is renamed *.broken and the
// next older one is tried, as the reference does.
import { mkdirSync, readdirSync, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log/logger.js';
import type { Snapshot } from '../raft/types.js';
import { decodeSnapshot, encodeSnapshot } from './codec.js';
import { crc32 } from './crc.js';
import type { WalSnapshotMarker } from './wal.js';

export const SNAP_SUFFIX = '.snap';
const MAGIC = Buffer.from('SVCSNAP1', 'ascii');
const HEADER_BYTES = MAGIC.length + 4;
// Files the snap dir legitimately holds besides .snap files (the v3 database and its peers).
const KNOWN_FILES = new Set(['db', 'db-lock']);

/** A snapshot file could not be used. */
export class SnapshotError extends Error {
  constructor(
    readonly code: 'SNAP_EMPTY' | 'SNAP_CRC_MISMATCH' | 'SNAP_BAD_FORMAT',
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'SnapshotError';
  }
}

/** The file name of a snapshot at (term, index). */
export function snapName(term: number, index: number): string {
  return `${term.toString(16).padStart(16, '0')}-${index.toString(16).padStart(16, '0')}${SNAP_SUFFIX}`;
}

/** Reads and verifies one snapshot file. */
export async function readSnapFile(path: string): Promise<Snapshot> {
  const b = await fsp.readFile(path);
  if (b.length === 0) throw new SnapshotError('SNAP_EMPTY', path, `snap: empty snapshot file ${path}`);
  if (b.length < HEADER_BYTES || !b.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new SnapshotError('SNAP_BAD_FORMAT', path, `snap: ${path} is not a snapshot file`);
  }
  const body = b.subarray(HEADER_BYTES);
  const want = b.readUInt32LE(MAGIC.length);
  const got = crc32(body);
  if (want !== got) throw new SnapshotError('SNAP_CRC_MISMATCH', path, `snap: crc mismatch in ${path} (stored ${want}, computed ${got})`);
  try {
    return decodeSnapshot(body);
  } catch (err) {
    throw new SnapshotError('SNAP_BAD_FORMAT', path, `snap: ${path}: ${(err as Error).message}`);
  }
}

/** Saves and loads the consensus snapshots of one member. */
export class Snapshotter {
  constructor(
    private readonly logger: Logger,
    readonly dir: string,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** Writes the snapshot durably; an empty snapshot (index 0) is not written. */
  async save(s: Snapshot): Promise<void> {
    if (s.metadata.index === 0) return;
    const body = encodeSnapshot(s);
    const header = Buffer.alloc(HEADER_BYTES);
    MAGIC.copy(header, 0);
    header.writeUInt32LE(crc32(body), MAGIC.length);
    const finalPath = join(this.dir, snapName(s.metadata.term, s.metadata.index));
    const tmpPath = finalPath + '.tmp';
    try {
      const fh = await fsp.open(tmpPath, 'w', 0o600);
      try {
        await fh.writev([header, body]);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsp.rename(tmpPath, finalPath);
    } catch (err) {
      this.logger.warn('failed to write a snap file', { path: finalPath, error: String(err) });
      await fsp.rm(tmpPath, { force: true });
      throw err;
    }
    const dh = await fsp.open(this.dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }

  /** Snapshot file names, newest first. */
  snapNames(): string[] {
    const names = readdirSync(this.dir);
    const snaps: string[] = [];
    for (const n of names) {
      if (n.endsWith(SNAP_SUFFIX)) snaps.push(n);
      else if (!KNOWN_FILES.has(n) && !n.endsWith('.broken') && !n.endsWith('.tmp')) {
        this.logger.warn('found unexpected non-snap file; skipping', { path: join(this.dir, n) });
      }
    }
    return snaps.sort().reverse();
  }

  /**
   * The newest readable snapshot; with `walMarkers`, the newest one the WAL also records (so the
   * WAL can be replayed from it). Unreadable files are renamed *.broken. Undefined when none fits.
   */
  async loadNewestAvailable(walMarkers?: WalSnapshotMarker[]): Promise<Snapshot | undefined> {
    for (const name of this.snapNames()) {
      const path = join(this.dir, name);
      let snap: Snapshot;
      try {
        snap = await readSnapFile(path);
      } catch (err) {
        this.logger.warn('failed to read a snap file', { path, error: String(err) });
        const brokenPath = path + '.broken';
        try {
          await fsp.rename(path, brokenPath);
          this.logger.warn('renamed to a broken snap file', { path, 'broken-path': brokenPath });
        } catch (rerr) {
          this.logger.warn('failed to rename a broken snap file', { path, 'broken-path': brokenPath, error: String(rerr) });
        }
        continue;
      }
      const m = snap.metadata;
      if (!walMarkers || walMarkers.some((w) => w.index === m.index && w.term === m.term)) return snap;
    }
    return undefined;
  }
}
export { walSnapshots } from './wal.js';

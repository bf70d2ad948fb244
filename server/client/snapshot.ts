// Snapshot streams: the server sends the database in chunks and then the sha256 of everything before it
// (32 bytes). `verifiedSnapshot` yields the database bytes only and fails if the digest does not match;
// `saveSnapshot` writes them to <file>.part, fsyncs and renames, as the reference's client does.
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { ClientError, Status } from './errors.js';

const DIGEST = 32;

/** Database bytes of a raw snapshot stream (chunks ending with a sha256 digest), checked against the digest. */
export async function* verifiedSnapshot(raw: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  let tail = Buffer.alloc(0);
  let total = 0;
  for await (const chunk of raw) {
    total += chunk.length;
    const all = tail.length === 0 ? chunk : Buffer.concat([tail, chunk]);
    // Hold back the last 32 bytes seen: they may be the digest.
    const cut = Math.max(0, all.length - DIGEST);
    tail = Buffer.from(all.subarray(cut));
    if (cut > 0) {
      const body = all.subarray(0, cut);
      hash.update(body);
      yield body;
    }
  }
  if (total < DIGEST) throw new ClientError(Status.DATA_LOSS, 'sha256 checksum not found');
  if (!hash.digest().equals(tail)) throw new ClientError(Status.DATA_LOSS, 'expected sha256 checksum not found in the snapshot');
}

export interface SaveProgress {
  /** Bytes written so far. */
  bytes: number;
}

/**
 * Writes a verified snapshot to `file` through `<file>.part` (fsynced, then renamed); returns the size.
 * The .part file is removed when anything fails.
 */
export async function saveSnapshot(raw: AsyncIterable<Buffer>, file: string, onProgress?: (p: SaveProgress) => void): Promise<number> {
  const part = `${file}.part`;
  const fd = openSync(part, 'w', 0o600);
  let bytes = 0;
  try {
    for await (const body of verifiedSnapshot(raw)) {
      let off = 0;
      while (off < body.length) off += writeSync(fd, body, off);
      bytes += body.length;
      onProgress?.({ bytes });
    }
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(part, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(part, file);
  return bytes;
}

// Snapshot streams: the server sends the database in chunks and then the sha256 of everything before it
// (32 bytes). `verifiedSnapshot` yields the database bytes only and fails if the digest does not match;
// `saveSnapshot` writes the whole stream — database and digest, the layout the reference's client saves
// and its restore checks — to <file>.part, verifies the digest, fsyncs and renames.
import { createHash, type Hash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { ClientError, Status } from './errors.js';

const DIGEST = 32;

/** Tracks a stream's bytes, holding back the last 32 (the digest candidate). */
class DigestTracker {
  private readonly hash: Hash = createHash('sha256');
  private tail = Buffer.alloc(0);
  total = 0;

  /** Feeds a chunk; returns the bytes now known to be database content. */
  push(chunk: Buffer): Buffer {
    this.total += chunk.length;
    const all = this.tail.length === 0 ? chunk : Buffer.concat([this.tail, chunk]);
    const cut = Math.max(0, all.length - DIGEST);
    this.tail = Buffer.from(all.subarray(cut));
    const body = all.subarray(0, cut);
    this.hash.update(body);
    return body;
  }

  /** Throws unless the held-back bytes are the sha256 of everything before them. */
  verify(): void {
    if (this.total < DIGEST) throw new ClientError(Status.DATA_LOSS, 'sha256 checksum not found');
    if (!this.hash.digest().equals(this.tail)) throw new ClientError(Status.DATA_LOSS, 'expected sha256 checksum not found in the snapshot');
  }
}

/** Database bytes of a raw snapshot stream (chunks ending with a sha256 digest), checked against the digest. */
export async function* verifiedSnapshot(raw: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const t = new DigestTracker();
  for await (const chunk of raw) {
    const body = t.push(chunk);
    if (body.length > 0) yield body;
  }
  t.verify();
}

export interface SaveProgress {
  /** Bytes written so far. */
  bytes: number;
}

/**
 * Writes a raw snapshot stream (database + trailing sha256) to `file` through `<file>.part`: verified,
 * fsynced, then renamed. Returns the database size (without the digest). The .part file is removed when
 * anything fails.
 */
export async function saveSnapshot(raw: AsyncIterable<Buffer>, file: string, onProgress?: (p: SaveProgress) => void): Promise<number> {
  const part = `${file}.part`;
  const fd = openSync(part, 'w', 0o600);
  const t = new DigestTracker();
  try {
    for await (const chunk of raw) {
      t.push(chunk);
      let off = 0;
      while (off < chunk.length) off += writeSync(fd, chunk, off);
      onProgress?.({ bytes: t.total });
    }
    t.verify();
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(part, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(part, file);
  return t.total - DIGEST;
}

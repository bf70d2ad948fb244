// Shared helpers of the mvcc tests: temp directories, stores on them and byte-string shorthands.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openBackend, type Backend, type BackendOptions } from '../../../server/storage/backend.js';
import { nopLogger } from '../../../server/log/logger.js';
import { MvccStore } from '../../../server/mvcc/kvstore.js';

/** A fresh temp dir; removed by cleanup(). */
export function tempDir(prefix = 'svc-mvcc-'): { dir: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Opens a backend at <dir>/member/snap/db. */
export function backendIn(dir: string, opts: BackendOptions = {}): Backend {
  return openBackend(nopLogger, path.join(dir, 'member', 'snap', 'db'), opts);
}

/**
 * A store on the backend at `dir` (a reopen after close() is a restart); batches commit at once by default, and
 * compaction steps follow each other without the member's pause.
 */
export function openStore(dir: string, opts: BackendOptions = { batchIntervalMs: 0 }): { be: Backend; st: MvccStore } {
  const be = backendIn(dir, opts);
  return { be, st: new MvccStore(be, { compaction: { sleepMs: 0 } }) };
}

/** UTF-8 bytes. */
export function b(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/** Bytes to a UTF-8 string. */
export function s(u: Uint8Array): string {
  return new TextDecoder().decode(u);
}

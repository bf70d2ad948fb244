// A temp dir per suite, for tests that write files next to the processes they start.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoggedProcess } from './process.js';

/** Mocha fixture: `tmp.path` is a fresh temp dir for the suite, removed after it (kept with SVC_TEST_KEEP=1). */
export function useTempDir(prefix: string): { readonly path: string } {
  const box = { path: '' };
  before(() => {
    box.path = mkdtempSync(join(tmpdir(), prefix));
  });
  after(() => {
    if (box.path && process.env.SVC_TEST_KEEP !== '1') rmSync(box.path, { recursive: true, force: true });
  });
  return box;
}

/**
 * Mocha fixture for a suite that starts processes itself: `box.dir` is a fresh temp dir for the suite, `box.procs` the
 * processes its tests push there; after the suite they are killed (SIGKILL, up to 5 s each), then the dir is removed.
 */
export function useProcessDir(prefix: string): { readonly dir: string; readonly procs: LoggedProcess[] } {
  const box = { dir: '', procs: [] as LoggedProcess[] };
  before(() => {
    box.dir = mkdtempSync(join(tmpdir(), prefix));
  });
  after(async () => {
    for (const p of box.procs) await p.stop('SIGKILL', 5000);
    rmSync(box.dir, { recursive: true, force: true });
  });
  return box;
}

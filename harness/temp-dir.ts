// A temp dir per suite, for tests that write files next to the processes they start.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

// The database file on a disk that fills up, for real: a small tmpfs (mounted by the test, as root). The timed
// commit that meets the full disk is handed to the member (which stops cleanly) instead of escaping as an uncaught
// exception, names the full volume (the native layer only says "Input/output error"), and every later commit
// refuses with the same error. The file keeps what was committed before: with room again, it opens with it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { nopLogger } from '../../../server/log/logger.js';
import { BackendError, openBackend } from '../../../server/storage/backend.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('storage backend on a full disk (a real tmpfs)', function () {
  this.timeout(60_000);
  let dir: string | undefined;
  let mounted = false;
  after(() => {
    if (mounted) execFileSync('umount', ['-l', dir!]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a failed timed commit reaches onFailure naming the full volume; later commits refuse; the file keeps what came before', async () => {
    if (process.getuid?.() !== 0) throw new Error('this test mounts a tmpfs: run it as root (as the Kubernetes tier is)');
    dir = mkdtempSync(join(tmpdir(), 'svc-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir]);
    mounted = true;
    const file = join(dir, 'db');
    const b = openBackend(nopLogger, file, { batchIntervalMs: 10 });
    let failure: Error | undefined;
    b.onFailure = (e) => (failure = e);
    const tx = b.batchTx();
    tx.put('key', bytes('before'), bytes('kept'));
    tx.end();
    b.forceCommit();

    const big = new Uint8Array(64 * 1024).fill(7);
    for (let i = 0; i < 200 && !failure; i++) {
      tx.put('key', bytes(`big/${i}`), big);
      tx.end();
      await sleep(15);
    }
    expect(failure, 'no commit failed on a 2 MiB disk').to.be.instanceOf(BackendError);
    expect((failure as BackendError).code).to.equal('BACKEND_COMMIT_FAILED');
    expect(failure!.message).to.match(/^failed to commit to .*db: .*\(no space left on device: the volume holding the data dir is full\)$/);
    expect(() => b.forceCommit()).to.throw(failure!.message);
    b.close();

    execFileSync('mount', ['-o', 'remount,size=64m', dir]);
    const again = openBackend(nopLogger, file, { batchIntervalMs: 0 });
    try {
      expect(new TextDecoder().decode(again.readTx().get('key', bytes('before')))).to.equal('kept');
    } finally {
      again.close();
    }
  });
});

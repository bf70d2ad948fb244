// The WAL directory lock: an owner that exited but is not yet reaped (a zombie: the moment between a member's exit
// and its parent's wait, when its supervisor already starts the next one) holds nothing; a live owner does.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { DirLock, LOCK_FILE_NAME } from '../../../server/storage/wal-lock.js';

const stat = (pid: number): string[] => {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).split(' ');
};

describe('storage: the WAL directory lock', () => {
  it('takes over the lock of a zombie owner, refuses a live one', async function () {
    this.timeout(20_000);
    const dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
    // `sleep 0` exits at once and its parent (exec'd into `sleep 5`) never waits for it: a zombie until the test kills the parent (a loaded CI machine may take seconds to get here)
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombie = await new Promise<number>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
      const deadline = Date.now() + 5000;
      while (stat(zombie)[0] !== 'Z' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(stat(zombie)[0]).to.equal('Z');
      const own = (pid: number) => writeFileSync(join(dir, LOCK_FILE_NAME), `${JSON.stringify({ pid, start: stat(pid)[19], host: hostname() })}\n`);
      own(parent.pid!);
      const refused = await DirLock.acquire(dir).then(() => 'taken', (e: Error) => e.message);
      expect(refused).to.equal(`wal: ${dir} is locked by pid ${parent.pid} on ${hostname()}`);
      own(zombie);
      const lock = await DirLock.acquire(dir);
      expect(JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8')).pid).to.equal(process.pid);
      await lock.release();
    } finally {
      parent.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

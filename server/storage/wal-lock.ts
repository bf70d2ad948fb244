// One writer per WAL directory, across processes.
//
// Node has no flock/fcntl, so the lock is a file created with O_EXCL holding the owner's pid and the
// owner's process start time (from /proc). A lock whose owner is gone is stale and is taken over: the
// pid no longer exists, or it exists but started at another time (the pid was reused, e.g. pid 1 of a
// restarted container). Recording the start time is what makes "pid alive" trustworthy.
// Known limit: two processes that find the same stale lock at the same instant can both take it over
// (unlink + O_EXCL create is not one atomic step). That needs a crash plus two simultaneous starts on
// one data dir; the supervisor (StatefulSet, the operator's local runtime) never starts two.
import { promises as fsp, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { WalError } from './wal-errors.js';

export const LOCK_FILE_NAME = 'LOCK';

interface LockOwner {
  pid: number;
  start: string;
  host: string;
}

/** Fields 3 on of /proc/<pid>/stat (state, ..., starttime at [19]); the command name in field 2 may contain spaces. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function processStart(pid: number): string | undefined {
  return statFields(pid)?.[19];
}

function isAlive(owner: LockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  // an owner that exited and is not yet reaped by its parent (a zombie) holds nothing: its successor may start
  if (statFields(owner.pid)?.[0] === 'Z') return false;
  const start = processStart(owner.pid);
  if (start !== undefined && owner.start !== '' && start !== owner.start) return false;
  return true;
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (typeof o.pid !== 'number') return undefined;
    return { pid: o.pid, start: String(o.start ?? ''), host: String(o.host ?? '') };
  } catch {
    return undefined;
  }
}

/** An exclusive, process-lifetime lock on a directory. */
export class DirLock {
  private constructor(private path: string) {}

  /** Takes the lock of `dir` or throws WalError WAL_LOCKED naming the holder. */
  static async acquire(dir: string): Promise<DirLock> {
    const path = join(dir, LOCK_FILE_NAME);
    const me: LockOwner = { pid: process.pid, start: processStart(process.pid) ?? '', host: hostname() };
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fh = await fsp.open(path, 'wx', 0o600);
        try {
          await fh.writeFile(JSON.stringify(me) + '\n');
          await fh.sync();
        } finally {
          await fh.close();
        }
        return new DirLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      let owner: LockOwner | undefined;
      try {
        owner = parseOwner(await fsp.readFile(path, 'utf8'));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      // An unparsable lock is a crash between create and write: nobody can own it.
      if (owner && isAlive(owner)) {
        throw new WalError('WAL_LOCKED', `wal: ${dir} is locked by pid ${owner.pid} on ${owner.host || 'unknown host'}`);
      }
      await fsp.rm(path, { force: true });
    }
    throw new WalError('WAL_LOCKED', `wal: could not lock ${dir}`);
  }

  /** The directory was renamed (creation in a temp dir): follow it. */
  moved(dir: string): void {
    this.path = join(dir, LOCK_FILE_NAME);
  }

  /** Removes the lock file. */
  async release(): Promise<void> {
    await fsp.rm(this.path, { force: true });
  }
}

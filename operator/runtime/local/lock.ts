// The one loop of a state dir: the file <state-dir>/operator.lock, created exclusively by the process that drives the
// cluster (`local run`, or `local apply`, `recover` and the verbs that wait), holding its pid and its start time
// (/proc, so a pid reused after a reboot is not taken for the holder). A lock whose holder is gone is taken over.
// `local run` also writes into it where it listens and how its last pass settled: what `local apply` beside it reads.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The command that runs for as long as it is not stopped; the others hand their spec over to it. */
export const RUN_COMMAND = 'local run';

/** How a pass of `local run` settled (steady, blocked, suspended, failed), after taking the spec as of `passAt`. */
export interface SettledRecord {
  outcome: string;
  /** The step planned last (a planner Step as JSON). */
  step: unknown;
  /** When the pass began that read the spec (ms since the epoch): a spec saved before it was taken. */
  passAt: number;
  /** Mutating steps carried out since the previous settling. */
  actions: string[];
  error?: string;
}

/** The lock file's content. */
export interface LockHolder {
  pid: number;
  /** The start time of the process (/proc/<pid>/stat field 22), where the system tells. */
  started?: string;
  command: string;
  /** ISO time the lock was taken. */
  since: string;
  /** `local run`: the URL of /healthz and /metrics. */
  listen?: string;
  settled?: SettledRecord;
}

export function lockFile(stateDir: string): string {
  return join(stateDir, 'operator.lock');
}

/** The state and start time of process `pid` as the kernel tells them (/proc/<pid>/stat), or undefined without /proc. */
function processStat(pid: number): { state: string; started: string } | undefined {
  try {
    // the command name (field 2) is in parentheses and may hold spaces: count from the last ')'
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], started: fields[19] };
  } catch {
    return undefined;
  }
}

/** Whether the holder still runs (the same process: its pid alive with the recorded start time, and no zombie). */
export function holderAlive(h: LockHolder): boolean {
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  const now = processStat(h.pid);
  return now === undefined || (now.state !== 'Z' && (h.started === undefined || now.started === h.started));
}

/** The lock's holder as written, or undefined when there is none (or it cannot be read: a write under way). */
export function readLock(stateDir: string): LockHolder | undefined {
  return readLockAt(lockFile(stateDir));
}

/** A lock this process holds. */
export class StateDirLock {
  private holder: LockHolder;
  constructor(readonly stateDir: string, holder: LockHolder, readonly tookOver?: LockHolder) {
    this.holder = holder;
  }

  /** Rewrites the holder's fields (atomically: readers see the old or the new content). */
  update(fields: Partial<Pick<LockHolder, 'listen' | 'settled'>>): void {
    this.holder = { ...this.holder, ...fields };
    const tmp = `${lockFile(this.stateDir)}.tmp-${process.pid}`;
    writeFileAll(tmp, this.holder, 'w');
    renameSync(tmp, lockFile(this.stateDir));
  }

  /** Gives the lock up (only if it is still this process's). */
  release(): void {
    if (readLock(this.stateDir)?.pid === process.pid) rmSync(lockFile(this.stateDir), { force: true });
  }
}

function writeFileAll(file: string, h: LockHolder, flag: 'w' | 'wx'): void {
  const fd = openSync(file, flag, 0o600);
  try {
    writeSync(fd, `${JSON.stringify(h)}\n`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Takes the lock of `stateDir` for `command`: the lock, or the live holder that has it. A holder that is gone
 * (SIGKILLed, the machine rebooted) leaves its lock behind: that one is taken over (`tookOver` names it).
 */
export function takeLock(stateDir: string, command: string): StateDirLock | { held: LockHolder } {
  mkdirSync(stateDir, { recursive: true });
  const started = processStat(process.pid)?.started;
  const mine: LockHolder = { pid: process.pid, ...(started !== undefined ? { started } : {}), command, since: new Date().toISOString() };
  let tookOver: LockHolder | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      writeFileAll(lockFile(stateDir), mine, 'wx');
      return new StateDirLock(stateDir, mine, tookOver);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const h = readLock(stateDir);
    if (h && holderAlive(h)) return { held: h };
    if (!h && existsSync(lockFile(stateDir)) && attempt < 4) continue; // being written: read it again
    // gone: moved aside by one taker only (a rename is atomic); the one that moved a live holder's lock puts it back
    const aside = `${lockFile(stateDir)}.stale-${process.pid}`;
    try {
      renameSync(lockFile(stateDir), aside);
    } catch {
      continue;
    }
    const moved = readLockAt(aside);
    if (moved && holderAlive(moved)) {
      renameSync(aside, lockFile(stateDir));
      return { held: moved };
    }
    rmSync(aside, { force: true });
    tookOver = moved ?? h;
  }
  throw new Error(`cannot take the lock ${lockFile(stateDir)}: it keeps changing hands`);
}

function readLockAt(file: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}

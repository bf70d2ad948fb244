// Child processes for integration tests: output captured to a log file, helpers to wait for a log
// line or an HTTP answer, and a registry that kills whatever is still running at the end of the
// mocha run (and, as a last resort, when the test process exits), so a failing test leaves no
// processes behind. Tests should still stop their own processes in their own `after` hooks.

import type { SecureVersion } from 'node:tls';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, openSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { HarnessError } from './errors.js';


export interface SpawnLoggedOptions {
  /** stdout and stderr both go here (appended). */
  logFile: string;
  cwd?: string;
  /** Added to (not replacing) process.env. */
  env?: NodeJS.ProcessEnv;
  /** A short name for messages. Default: the command's base name. */
  name?: string;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A child process whose output is in `logFile`. */
export interface LoggedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<ExitStatus>;
  /** Null while running. */
  exitStatus(): ExitStatus | null;
  /** The log so far. */
  log(): string;
  /** Waits until the log matches; resolves with the matching line. */
  waitForLog(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  /** Sends `signal` (default SIGTERM), waits up to graceMs (default 10 s), then SIGKILLs. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<ExitStatus>;
}

const live = new Set<LoggedProcess>();

/** Processes started through this module that have not exited yet. */
export function liveProcesses(): LoggedProcess[] {
  return [...live];
}

/** Stops every process still running (used by the end-of-run hook; tests may call it too). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop('SIGKILL', 2000)));
}

const exitKills = new Set<ChildProcess>();
let exitHooked = false;

/**
 * Last resort for a child of the test process: SIGKILL when the test process exits while the child still runs
 * (only a signal can still be sent then). A clean run stops its children itself first.
 */
export function killOnExit(child: ChildProcess): void {
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => {
      for (const c of exitKills) {
        try {
          process.kill(c.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    });
  }
  if (child.pid === undefined) return;
  exitKills.add(child);
  child.once('exit', () => exitKills.delete(child));
  child.once('error', () => exitKills.delete(child));
}

// When this module is first imported while mocha loads test files, this registers an `after` hook
// on the root suite: it runs once, after every test of the run.
const mochaAfter = (globalThis as { after?: (fn: () => Promise<void>) => void }).after;
if (typeof mochaAfter === 'function') {
  try {
    mochaAfter(async function stopLeftoverProcesses() {
      await stopAll();
    });
  } catch {
    // not inside a mocha file load; the exit hook still applies
  }
}

/** Starts `command args` with stdout and stderr appended to opts.logFile. */
export function spawnLogged(command: string, args: readonly string[], opts: SpawnLoggedOptions): LoggedProcess {
  const fd = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(command, [...args], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', fd, fd],
    });
  } finally {
    closeSync(fd); // the child holds its own copy
  }
  killOnExit(child);
  const name = opts.name ?? command.split('/').pop() ?? command;
  let status: ExitStatus | null = null;
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      status = { code, signal };
      live.delete(proc);
      resolve(status);
    });
    child.once('error', (err) => {
      // spawn failure (e.g. ENOENT): note it in the log and report it as an exit so waiters wake up
      appendFileSync(opts.logFile, `spawn ${command} failed: ${err.message}\n`);
      status = { code: -1, signal: null };
      live.delete(proc);
      resolve(status);
    });
  });
  const log = () => {
    try {
      return readFileSync(opts.logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const proc: LoggedProcess = {
    name,
    child,
    pid: child.pid ?? -1,
    logFile: opts.logFile,
    exited,
    exitStatus: () => status,
    log,
    async waitForLog(pattern, timeoutMs = 30000) {
      const re = typeof pattern === 'string' ? new RegExp(escapeRegExp(pattern)) : pattern;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = log()
          .split('\n')
          .find((l) => re.test(l));
        if (line !== undefined) return line;
        if (status) {
          throw new HarnessError(
            'PROCESS_EXITED',
            `${name} exited (${describe(status)}) before logging ${re}; log ${opts.logFile}:\n${tail(log())}`,
          );
        }
        if (Date.now() > deadline) {
          throw new HarnessError('WAIT_TIMEOUT', `${name} did not log ${re} within ${timeoutMs} ms; log ${opts.logFile}:\n${tail(log())}`);
        }
        await sleep(50);
      }
    },
    async stop(signal = 'SIGTERM', graceMs = 10000) {
      if (status) return status;
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        try {
          child.kill('SIGKILL');
        } catch {
          // already gone
        }
      }, graceMs);
      const st = await exited;
      clearTimeout(timer);
      return st;
    },
  };
  if (child.pid !== undefined) live.add(proc);
  return proc;
}

export interface WaitForHttpOptions {
  timeoutMs?: number;
  /** Status that counts as ready. Default 200. */
  status?: number;
  /** For https URLs: the CA to trust (and client cert/key when the server asks for one). */
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** Stop waiting early (with PROCESS_EXITED) if this process exits. */
  process?: LoggedProcess;
}

/** Polls `url` with GET until it answers opts.status (default 200); resolves with the body. */
export async function waitForHttp(url: string, opts: WaitForHttpOptions = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? 30000;
  const want = opts.status ?? 200;
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const res = await httpGet(url, opts);
      if (res.status === want) return res.body;
      last = `HTTP ${res.status} ${res.body.trim()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    const st = opts.process?.exitStatus();
    if (st) {
      throw new HarnessError(
        'PROCESS_EXITED',
        `${opts.process!.name} exited (${describe(st)}) while waiting for ${url}; log ${opts.process!.logFile}:\n${tail(opts.process!.log())}`,
      );
    }
    if (Date.now() > deadline) {
      throw new HarnessError('WAIT_TIMEOUT', `${url} did not answer ${want} within ${timeoutMs} ms (last: ${last})`);
    }
    await sleep(100);
  }
}

/** One GET with a 2 s timeout: { status, body }. `insecure`: any server certificate is accepted (self-signed ones). */
export function httpGet(
  url: string,
  tlsOpts: { ca?: Buffer; cert?: Buffer; key?: Buffer; insecure?: boolean; minVersion?: SecureVersion; maxVersion?: SecureVersion } = {},
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.get(u, { ca: tlsOpts.ca, cert: tlsOpts.cert, key: tlsOpts.key, minVersion: tlsOpts.minVersion, maxVersion: tlsOpts.maxVersion, rejectUnauthorized: !tlsOpts.insecure, timeout: 2000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

export interface RunCommandOptions {
  /** Added to (not replacing) process.env. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Written to stdin (closed after); without it stdin is closed at once. */
  input?: string;
  /** SIGKILL after this long (default 120 s). */
  timeoutMs?: number;
}

/** Runs `argv` to completion and resolves its output; rejects (COMMAND_FAILED, with stderr) on a non-zero exit. */
export function runCommand(argv: readonly string[], opts: RunCommandOptions = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      env: { ...process.env, ...opts.env },
      cwd: opts.cwd,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    killOnExit(child);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timeoutMs = opts.timeoutMs ?? 120_000;
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
    child.once('error', (e) => { clearTimeout(timer); reject(e); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve({ stdout, stderr });
      const why = timedOut ? `was killed after ${timeoutMs} ms` : `exited ${code ?? signal}`;
      const said = stderr.trim() || stdout.trim();
      reject(new HarnessError('COMMAND_FAILED', `${argv.join(' ')} ${why}${said ? `: ${said}` : ''}`));
    });
    if (child.stdin) {
      child.stdin.on('error', () => undefined); // the exit code tells what went wrong
      child.stdin.end(opts.input);
    }
  });
}

/**
 * Polls check() every everyMs until it returns something other than undefined, and resolves that; after timeoutMs
 * rejects (WAIT_TIMEOUT) naming `what` and the last error check() threw.
 */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new HarnessError('WAIT_TIMEOUT', `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await sleep(everyMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function describe(st: ExitStatus): string {
  return st.signal ? `signal ${st.signal}` : `code ${st.code}`;
}

function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

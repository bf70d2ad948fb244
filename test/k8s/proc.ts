// Child processes of the testbed: started with their output in a log file, stopped with SIGTERM then SIGKILL,
// and never left behind (the harness's exit hook kills what is still running if the test process ends abruptly).
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createServer } from 'node:net';
import { openSync, closeSync } from 'node:fs';
import { killOnExit } from '../../harness/process.js';

/** Error of the testbed's process handling. */
export class TestbedError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'TestbedError';
  }
}

/** A child process whose stdout and stderr go to one log file. */
export class ManagedProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly name: string, readonly argv: string[], readonly logFile: string, opts: SpawnOptions = {}) {
    const fd = openSync(logFile, 'a');
    try {
      this.child = spawn(argv[0], argv.slice(1), { ...opts, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    killOnExit(this.child);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
      this.child.once('error', () => resolve({ code: -1, signal: null }));
    });
  }

  get pid(): number | undefined { return this.child.pid; }

  /** True while the process has not exited. */
  get running(): boolean { return this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined; }

  /** SIGTERM, wait up to graceMs, then SIGKILL; resolves once the process is gone. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) { await this.exited; return; }
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => { if (this.running) this.child.kill('SIGKILL'); }, graceMs);
    try { await this.exited; } finally { clearTimeout(timer); }
  }
}

/** A TCP port that was free on host a moment ago. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls check() until it returns a value other than undefined, or throws after timeoutMs. */
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
      throw new TestbedError('TIMEOUT', `timed out after ${timeoutMs}ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Runs a command to completion and returns its output; rejects on a non-zero exit. */
export async function run(argv: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { env: opts.env ?? process.env, cwd: opts.cwd, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.once('error', (e) => { clearTimeout(timer); reject(e); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new TestbedError('COMMAND_FAILED', `${argv.join(' ')} exited ${code ?? signal}: ${stderr.trim() || stdout.trim()}`));
    });
    if (child.stdin) {
      child.stdin.on('error', () => undefined); // the exit code tells what went wrong
      child.stdin.end(opts.input);
    }
  });
}

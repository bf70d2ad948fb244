// Runs the compiled svcctl of this build as a child process, the way bin/svcctl does, and collects its output.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The compiled svcctl entry of the build this file was compiled into. */
export const SVCCTL_ENTRY = fileURLToPath(new URL('../../../server/cli/svcctl.js', import.meta.url));

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Replaces SVCCTL_* and SVC_VERSION of the test's environment (those are always dropped first). */
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
}

function nodeArgs(args: readonly string[]): string[] {
  const script = `import(${JSON.stringify(pathToFileURL(SVCCTL_ENTRY).href)}).then((m) => m.main(process.argv.slice(1))).then((c) => { process.exitCode = c; })`;
  return ['-e', script, '--', ...args];
}

function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVCCTL_') && k !== 'SVC_VERSION') env[k] = v;
  return { ...env, ...extra };
}

/** `svcctl ...args`; never rejects for a non-zero exit. */
export function svcctl(args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, nodeArgs(args), { env: childEnv(opts.env), timeout: opts.timeoutMs ?? 30000, encoding: 'utf8', maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(opts.input ?? '');
  });
}

/** A long-running svcctl (watch, keep-alive) whose output accumulates until stopped with SIGINT. */
export interface Running {
  child: ChildProcess;
  stdout(): string;
  /** Waits until stdout matches. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGINT, then the result. */
  interrupt(): Promise<RunResult>;
}

export function startSvcctl(args: readonly string[], opts: RunOptions = {}): Running {
  const child = spawn(process.execPath, nodeArgs(args), { env: childEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(opts.input ?? '');
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<number>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 130 : -1))));
  return {
    child,
    stdout: () => out,
    async waitFor(re, timeoutMs = 15000) {
      const deadline = Date.now() + timeoutMs;
      while (!re.test(out)) {
        if (child.exitCode !== null) throw new Error(`svcctl exited (${child.exitCode}) before printing ${re}: ${out}\n${err}`);
        if (Date.now() > deadline) throw new Error(`svcctl did not print ${re} within ${timeoutMs} ms: ${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return out;
    },
    async interrupt() {
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.kill('SIGINT');
      const code = await exited;
      clearTimeout(timer);
      return { code, stdout: out, stderr: err };
    },
  };
}

/**
 * Replaces what legitimately differs between two clusters (ids, revisions, sizes, durations, ports, versions)
 * so that two outputs can be compared for shape.
 */
export function shape(text: string): string {
  return text
    .replace(/\d+(\.\d+)?(ns|µs|ms|s)\b/g, '<dur>')
    .replace(/\b\d+(\.\d+)? (B|kB|MB|GB)\b/g, '<size>')
    .replace(/\b[0-9a-f]{12,16}\b/g, '<hex>')
    .replace(/\d+/g, 'N')
    // Member names: the reference helper names them refN, ours mN.
    .replace(/\b(ref|m)N\b/g, '<name>')
    .replace(/N(\.N)+/g, 'N')
    .replace(/ +\|/g, ' |')
    .replace(/\| +/g, '| ')
    .replace(/-{2,}/g, '--')
    .replace(/ {2,}/g, ' ');
}
